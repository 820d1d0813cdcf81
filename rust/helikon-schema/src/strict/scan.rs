//! The keywords that decide how a schema object is normalized, found in one pass over its keys.
use crate::tree::{Node, Obj, Text};

/// The structural keywords of one schema object (a value each, when present).
pub(super) struct Keys<'m, S> {
    pub(super) reference: Option<&'m Node<S>>,
    pub(super) all_of: Option<&'m Node<S>>,
    pub(super) ty: Option<&'m Node<S>>,
    pub(super) any_of: bool,
    pub(super) one_of: bool,
    pub(super) enumeration: Option<&'m Node<S>>,
    pub(super) constant: Option<&'m Node<S>>,
    pub(super) properties: Option<&'m Node<S>>,
    pub(super) required: Option<&'m Node<S>>,
    pub(super) additional: Option<&'m Node<S>>,
    pub(super) items: Option<&'m Node<S>>,
    pub(super) prefix_items: Option<&'m Node<S>>,
}

impl<'m, S: Text> Keys<'m, S> {
    /// One pass over `m` (instead of a lookup per keyword).
    pub(super) fn scan(m: &'m Obj<S>) -> Self {
        let mut k = Keys {
            reference: None,
            all_of: None,
            ty: None,
            any_of: false,
            one_of: false,
            enumeration: None,
            constant: None,
            properties: None,
            required: None,
            additional: None,
            items: None,
            prefix_items: None,
        };
        for (key, value) in m.iter() {
            let slot = match key.as_str() {
                "type" => &mut k.ty,
                "properties" => &mut k.properties,
                "required" => &mut k.required,
                "$ref" => &mut k.reference,
                "items" => &mut k.items,
                "enum" => &mut k.enumeration,
                "additionalProperties" => &mut k.additional,
                "anyOf" => {
                    k.any_of = true;
                    continue;
                }
                "oneOf" => {
                    k.one_of = true;
                    continue;
                }
                "const" => &mut k.constant,
                "allOf" => &mut k.all_of,
                "prefixItems" => &mut k.prefix_items,
                _ => continue,
            };
            *slot = Some(value);
        }
        k
    }
}
