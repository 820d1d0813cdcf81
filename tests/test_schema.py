"""helikon.schema: strict/bedrock/gemini normalizers, checked on pydantic-generated schemas.

The corpus below is generated in this module from pydantic models. For each model either
``strict()`` succeeds, the result obeys OpenAI's strict-mode rules, and it still validates the
model's own example instances (absent optional fields mapped to explicit ``null``), or
``strict()`` raises ``SchemaError`` naming the offending field.
"""

from __future__ import annotations

import collections
import copy
import datetime as dt
import enum
import json
import uuid
from decimal import Decimal
from typing import Annotated, Any, Generic, Literal, TypeVar

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel

from helikon import _native
from helikon import schema as hs
from helikon.errors import SchemaError
from tests.conftest import load_shared_json

# --------------------------------------------------------------------------- the corpus


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    city: str
    zip: str | None = None


class Person(BaseModel):
    name: str
    age: int
    address: Address


class Flat(BaseModel):
    a: str
    b: int
    c: float
    d: bool


class Optionals(BaseModel):
    a: int | None = None
    b: str = "x"
    c: list[int] = Field(default_factory=list)
    d: float | None


class WithEnum(BaseModel):
    color: Color
    level: Level = Level.LOW


class WithLiteral(BaseModel):
    mode: Literal["fast", "slow"]
    one: Literal["only"] = "only"
    mixed: Literal[1, "one"] = 1


class WithDates(BaseModel):
    at: dt.datetime
    on: dt.date
    t: dt.time | None = None
    span: dt.timedelta | None = None


class WithIds(BaseModel):
    id: uuid.UUID
    price: Decimal
    blob: bytes = b""


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Tree(BaseModel):
    label: str
    left: Tree | None = None
    right: Tree | None = None


class Dept(BaseModel):
    name: str
    staff: list[Employee] = []


class Employee(BaseModel):
    name: str
    dept: Dept | None = None


Dept.model_rebuild()


class Cat(BaseModel):
    kind: Literal["cat"]
    meows: bool


class Dog(BaseModel):
    kind: Literal["dog"]
    barks: int = 1


class Owner(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind")
    pets: list[Annotated[Cat | Dog, Field(discriminator="kind")]] = []


class PlainUnion(BaseModel):
    v: int | str
    w: int | str | None = None
    x: Address | Person


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    next: str | None = None


class Item(BaseModel):
    sku: str
    qty: int = 1


class Catalog(BaseModel):
    page: Page[Item]
    ints: Page[int]


class Lists(BaseModel):
    people: list[Person]
    matrix: list[list[int]]
    maybe: list[Address] | None = None


class Tuples(BaseModel):
    pair: tuple[int, str]
    many: tuple[int, ...] = ()
    tags: set[str] = set()
    frozen: frozenset[int] = frozenset()


class Constrained(BaseModel):
    n: Annotated[int, Field(ge=0, le=10)]
    s: Annotated[str, Field(min_length=1, max_length=5, pattern=r"^[a-z]+$")]
    f: Annotated[float, Field(gt=0, multiple_of=0.5)]
    items: Annotated[list[int], Field(min_length=1, max_length=3)]


class Described(BaseModel):
    """A model with docs."""

    name: str = Field(description="the name", title="Name!")
    address: Address = Field(description="where")
    old: int = Field(default=0, deprecated=True)


class Aliased(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    first_name: str = Field(alias="firstName")
    n: int = Field(default=0, alias="count")


class Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a: int
    b: str | None = None


class Empty(BaseModel):
    pass


class HasEmpty(BaseModel):
    e: Empty
    es: list[Empty] = []


class Deep(BaseModel):
    person: Person
    owners: list[Owner] = []
    tree: Tree | None = None


class Base(BaseModel):
    id: int


class Child(Base):
    extra: str = "e"


class Inherit(BaseModel):
    child: Child
    base: Base


class Config(BaseModel):
    retries: int = 3
    timeout: float = 1.5
    name: str = "svc"
    debug: bool = False


class Money(BaseModel):
    amount: Decimal
    currency: Literal["EUR", "USD"] = "EUR"


class Invoice(BaseModel):
    number: str
    lines: list[Money]
    issued: dt.date
    paid: dt.datetime | None = None


class Event(BaseModel):
    name: str
    when: dt.datetime
    tags: list[str] = []
    level: Level | None = None


class Pair(BaseModel, Generic[T]):
    left: T
    right: T


class PairHolder(BaseModel):
    p: Pair[int]
    q: Pair[Address]


class OptionalNested(BaseModel):
    a: Address | None
    b: list[Address | None] = []


class UnionOfLists(BaseModel):
    v: list[int] | list[str]


class NullableEnum(BaseModel):
    c: Color | None = None
    lit: Literal["a", "b"] | None = None


class FloatInt(BaseModel):
    x: float = 0
    y: int | float = 0


class Linked(BaseModel):
    value: str
    next: Linked | None = None


class Graph(BaseModel):
    nodes: list[Node]
    root: Node | None = None


class Survey(BaseModel):
    question: str
    answers: list[Literal["yes", "no", "maybe"]]
    scores: list[Annotated[int, Field(ge=1, le=5)]] = []


class Outer(BaseModel):
    class Inner(BaseModel):
        x: int

    inner: Inner
    inners: list[Inner] = []


class Settings(BaseModel):
    colors: list[Color] = []
    primary: Color = Color.RED
    config: Config = Config()


# --- models strict mode cannot express (expected: SchemaError naming the field)


class Ticket(BaseModel):
    title: str
    meta: dict  # type: ignore[type-arg]


class Counts(BaseModel):
    counts: dict[str, int]


class Anything(BaseModel):
    x: Any


class ExtraAllowed(BaseModel):
    model_config = ConfigDict(extra="allow")

    a: int


class InnerDict(BaseModel):
    meta: dict[str, Any]


class OuterDict(BaseModel):
    inner: InnerDict


class Bag(BaseModel):
    items: list[dict]  # type: ignore[type-arg]


class MaybeDict(BaseModel):
    meta: dict[str, str] | None = None


class AnyList(BaseModel):
    values: list  # type: ignore[type-arg]


IntList = RootModel[list[int]]


def _a() -> Address:
    return Address(street="Main 1", city="Oslo")


def _p() -> Person:
    return Person(name="Ann", age=3, address=_a())


# (model, example instances, expected error field or None)
CORPUS: list[tuple[type[BaseModel], list[BaseModel], str | None]] = [
    (Address, [_a(), Address(street="s", city="c", zip="0150")], None),
    (Person, [_p()], None),
    (Flat, [Flat(a="a", b=1, c=1.5, d=True)], None),
    (Optionals, [Optionals(d=None), Optionals(a=1, b="y", c=[1], d=2.0)], None),
    (WithEnum, [WithEnum(color=Color.GREEN), WithEnum(color=Color.RED, level=Level.HIGH)], None),
    (WithLiteral, [WithLiteral(mode="fast"), WithLiteral(mode="slow", mixed="one")], None),
    (
        WithDates,
        [
            WithDates(at=dt.datetime(2024, 1, 2, 3, 4, 5), on=dt.date(2024, 1, 2)),
            WithDates(
                at=dt.datetime(2024, 1, 2, tzinfo=dt.UTC),
                on=dt.date(2024, 1, 2),
                t=dt.time(1, 2),
                span=dt.timedelta(seconds=90),
            ),
        ],
        None,
    ),
    (WithIds, [WithIds(id=uuid.UUID(int=7), price=Decimal("1.50"), blob=b"ab")], None),
    (
        Node,
        [Node(value=1), Node(value=1, children=[Node(value=2, children=[Node(value=3)])])],
        None,
    ),
    (
        Tree,
        [Tree(label="r", left=Tree(label="l"), right=Tree(label="x", left=Tree(label="y")))],
        None,
    ),
    (
        Dept,
        [Dept(name="d", staff=[Employee(name="e"), Employee(name="f", dept=Dept(name="g"))])],
        None,
    ),
    (Employee, [Employee(name="e", dept=Dept(name="d", staff=[Employee(name="x")]))], None),
    (Cat, [Cat(kind="cat", meows=True)], None),
    (
        Owner,
        [
            Owner(
                pet=Cat(kind="cat", meows=False),
                pets=[Dog(kind="dog"), Cat(kind="cat", meows=True)],
            )
        ],
        None,
    ),
    (PlainUnion, [PlainUnion(v=1, x=_a()), PlainUnion(v="s", w=2, x=_p())], None),
    (Page[Item], [Page[Item](items=[Item(sku="a")], total=1)], None),
    (Page[int], [Page[int](items=[1, 2], total=2, next="n")], None),
    (
        Catalog,
        [Catalog(page=Page[Item](items=[], total=0), ints=Page[int](items=[1], total=1))],
        None,
    ),
    (
        Lists,
        [Lists(people=[_p()], matrix=[[1, 2], []]), Lists(people=[], matrix=[], maybe=[_a()])],
        None,
    ),
    (
        Tuples,
        [
            Tuples(pair=(1, "a")),
            Tuples(pair=(2, "b"), many=(1, 2, 3), tags={"x"}, frozen=frozenset({1})),
        ],
        None,
    ),
    (Constrained, [Constrained(n=3, s="abc", f=1.5, items=[1])], None),
    (Described, [Described(name="n", address=_a())], None),
    (Aliased, [Aliased(firstName="a"), Aliased(firstName="b", count=3)], None),
    (Forbid, [Forbid(a=1), Forbid(a=1, b="b")], None),
    (Empty, [Empty()], None),
    (HasEmpty, [HasEmpty(e=Empty(), es=[Empty()])], None),
    (
        Deep,
        [Deep(person=_p(), owners=[Owner(pet=Dog(kind="dog", barks=3))], tree=Tree(label="t"))],
        None,
    ),
    (Child, [Child(id=1), Child(id=2, extra="x")], None),
    (Inherit, [Inherit(child=Child(id=1), base=Base(id=2))], None),
    (Config, [Config(), Config(retries=1, debug=True)], None),
    (Money, [Money(amount=Decimal("3.10"))], None),
    (
        Invoice,
        [
            Invoice(
                number="1",
                lines=[Money(amount=Decimal(1), currency="USD")],
                issued=dt.date(2024, 5, 1),
            )
        ],
        None,
    ),
    (
        Event,
        [
            Event(name="e", when=dt.datetime(2024, 1, 1)),
            Event(name="f", when=dt.datetime(2024, 1, 1), tags=["a"], level=Level.HIGH),
        ],
        None,
    ),
    (
        PairHolder,
        [PairHolder(p=Pair[int](left=1, right=2), q=Pair[Address](left=_a(), right=_a()))],
        None,
    ),
    (OptionalNested, [OptionalNested(a=None), OptionalNested(a=_a(), b=[None, _a()])], None),
    (UnionOfLists, [UnionOfLists(v=[1]), UnionOfLists(v=["a"])], None),
    (NullableEnum, [NullableEnum(), NullableEnum(c=Color.RED, lit="b")], None),
    (FloatInt, [FloatInt(), FloatInt(x=1.5, y=2.5)], None),
    (Linked, [Linked(value="a", next=Linked(value="b", next=Linked(value="c")))], None),
    (Graph, [Graph(nodes=[Node(value=1)], root=Node(value=2, children=[Node(value=3)]))], None),
    (Survey, [Survey(question="q", answers=["yes", "maybe"], scores=[1, 5])], None),
    (Outer, [Outer(inner=Outer.Inner(x=1), inners=[Outer.Inner(x=2)])], None),
    (Settings, [Settings(), Settings(colors=[Color.GREEN], config=Config(name="x"))], None),
    (Pair[str], [Pair[str](left="a", right="b")], None),
    (Page[Person], [Page[Person](items=[_p()], total=1)], None),
    (Ticket, [Ticket(title="x", meta={"k": 1})], "Ticket.meta"),
    (Counts, [Counts(counts={"a": 1})], "Counts.counts"),
    (Anything, [Anything(x=1)], "Anything.x"),
    (ExtraAllowed, [ExtraAllowed(a=1)], "ExtraAllowed"),
    (OuterDict, [OuterDict(inner=InnerDict(meta={}))], "InnerDict.meta"),
    (Bag, [Bag(items=[{"a": 1}])], "Bag.items[]"),
    (MaybeDict, [MaybeDict()], "MaybeDict.meta"),
    (AnyList, [AnyList(values=[1])], "AnyList.values[]"),
    (IntList, [IntList([1, 2])], "RootModel[list[int]]"),
]


def _id(entry: tuple[type[BaseModel], list[BaseModel], str | None]) -> str:
    return entry[0].__name__


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 50
    assert sum(1 for *_, err in CORPUS if err is None) >= 40


# --------------------------------------------------------------------------- helpers

# Keywords OpenAI strict mode accepts on a schema node.
_ALLOWED = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "definitions", "title", "description", "pattern", "format",
    "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minItems", "maxItems",
}  # fmt: skip
_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def assert_openai_strict(node: Any, where: str = "") -> None:
    """OpenAI's strict-mode rules, as far as a schema alone can show them."""
    assert isinstance(node, dict), f"{where}: not an object"
    assert set(node) <= _ALLOWED, f"{where}: unsupported keywords {set(node) - _ALLOWED}"
    if "$ref" in node:
        assert set(node) == {"$ref"}, f"{where}: $ref with siblings {set(node)}"
        return
    assert {"type", "anyOf", "enum", "const"} & set(node), f"{where}: no type"
    types = node.get("type")
    types = [types] if isinstance(types, str) else (types or [])
    if "object" in types:
        props = node.get("properties", {})
        assert node.get("additionalProperties") is False, f"{where}: object not closed"
        assert sorted(node.get("required", [])) == sorted(props), f"{where}: not all required"
        for name, sub in props.items():
            assert_openai_strict(sub, f"{where}.{name}")
    if "array" in types:
        assert_openai_strict(node["items"], f"{where}[]")
    if "format" in node:
        assert node["format"] in _FORMATS, f"{where}: format {node['format']}"
    for i, member in enumerate(node.get("anyOf", [])):
        assert_openai_strict(member, f"{where}|{i}")
    for name, sub in node.get("$defs", {}).items():
        assert_openai_strict(sub, f"$defs.{name}")


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        name = node["$ref"].split("/")[-1]
        target = root["$defs"][name] if node["$ref"] != "#" else root
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _branch_matches(data: dict[str, Any], branch: dict[str, Any]) -> bool:
    props = branch.get("properties", {})
    if not set(data) <= set(props):
        return False
    return all(data.get(name) == sub["const"] for name, sub in props.items() if "const" in sub)


def fill_absent(data: Any, node: dict[str, Any], root: dict[str, Any]) -> Any:
    """Map every absent optional property to an explicit ``null`` (what strict mode sends)."""
    node = _resolve(node, root)
    if isinstance(data, dict):
        if "properties" in node:
            return {
                name: fill_absent(data[name], sub, root) if name in data else None
                for name, sub in node["properties"].items()
            }
        for branch in node.get("anyOf", []) + node.get("oneOf", []):
            branch = _resolve(branch, root)
            if "properties" in branch and _branch_matches(data, branch):
                return fill_absent(data, branch, root)
        return data
    if isinstance(data, list):
        if isinstance(node.get("items"), dict):
            return [fill_absent(d, node["items"], root) for d in data]
        for branch in node.get("anyOf", []):
            branch = _resolve(branch, root)
            if branch.get("type") == "array" and isinstance(branch.get("items"), dict):
                return [fill_absent(d, branch["items"], root) for d in data]
    return data


# --------------------------------------------------------------------------- corpus tests


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_corpus_strict(entry: tuple[type[BaseModel], list[BaseModel], str | None]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    model, instances, error_field = entry
    schema = model.model_json_schema()
    original = jsonschema.Draft202012Validator(schema)
    report = hs.strict_report(schema)
    if error_field is not None:
        with pytest.raises(SchemaError) as excinfo:
            hs.strict(schema)
        assert str(excinfo.value).startswith(f"{error_field}: "), str(excinfo.value)
        assert not report.is_strict
        assert report.non_strict[0].field == error_field
        return
    out = hs.strict(schema)
    assert report.is_strict and report.schema == out
    assert hs.strict(out) == out, "not idempotent"
    assert_openai_strict(out)
    assert out["type"] == "object"
    validator = jsonschema.Draft202012Validator(out)
    for instance in instances:
        for data in (
            instance.model_dump(mode="json", by_alias=True, exclude_unset=True),
            instance.model_dump(mode="json", by_alias=True),
        ):
            original.validate(data)
            validator.validate(fill_absent(data, schema, schema))


def test_optional_fields_are_reported_with_their_pointer() -> None:
    report = hs.strict_report(Optionals.model_json_schema())
    assert report.nullable_fields() == (
        "/properties/a",
        "/properties/b",
        "/properties/c",
    )
    # `c` uses default_factory, for which pydantic emits no `default`.
    assert {r.field for r in report.lossy if r.kind == "keyword_removed"} == {
        "Optionals.a",
        "Optionals.b",
    }


def test_br01_ticket_error_and_report() -> None:
    schema = Ticket.model_json_schema()
    with pytest.raises(SchemaError, match=r"^Ticket\.meta: free-form object \(dict\)") as exc:
        hs.strict(schema)
    assert "set strict=False or give the field a fixed shape" in str(exc.value)
    assert isinstance(exc.value, ValueError)
    report = hs.strict_report(schema)
    assert report.non_strict == (
        hs.Issue(
            path="/properties/meta",
            field="Ticket.meta",
            kind="free_form_object",
            reason="free-form object (dict) cannot be expressed in OpenAI strict mode",
        ),
    )


def test_input_is_not_modified() -> None:
    schema = Deep.model_json_schema()
    before = repr(schema)
    hs.strict_report(schema)
    hs.bedrock(schema)
    hs.gemini(schema, for_function=True)
    assert repr(schema) == before


# --------------------------------------------------------------------------- errors


def test_errors_map_to_schema_error() -> None:
    with pytest.raises(SchemaError, match="not JSON-serializable"):
        hs.strict({"type": "object", "properties": {"a": {1, 2}}})
    with pytest.raises(SchemaError, match="not a JSON object"):
        hs.strict_report([{"type": "object"}])  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match=r"not a schema object|not a JSON object"):
        hs.strict([])  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="not a JSON object"):
        hs.gemini(True)  # type: ignore[arg-type]


def _bomb(levels: int = 30, fan: int = 10, description: bool = True) -> dict[str, Any]:
    defs: dict[str, Any] = {f"D{levels}": {"type": "string"}}
    for level in range(levels):
        ref: dict[str, Any] = {"$ref": f"#/$defs/D{level + 1}"}
        if description:
            ref["description"] = "x"
        defs[f"D{level}"] = {
            "type": "object",
            "properties": {f"p{i}": ref for i in range(fan)},
        }
    return {"$defs": defs, "$ref": "#/$defs/D0"}


def test_ref_fan_out_bomb_is_rejected() -> None:
    with pytest.raises(SchemaError, match="schema too large"):
        hs.strict_report(_bomb())
    with pytest.raises(SchemaError, match="schema too large"):
        hs.bedrock(_bomb(description=False))
    with pytest.raises(SchemaError, match="schema too large"):
        hs.gemini(_bomb(description=False), for_function=True)


def test_deep_nesting_is_rejected() -> None:
    # 80 object levels: past the JSON parser's nesting limit.
    node: dict[str, Any] = {"type": "string"}
    for _ in range(80):
        node = {"type": "object", "properties": {"a": node}, "required": ["a"]}
    with pytest.raises(SchemaError, match="schema too deep"):
        hs.strict(node)
    # 100 array levels: parses, then hits the normalizer's depth budget of 64.
    arr: dict[str, Any] = {"type": "string"}
    for _ in range(100):
        arr = {"type": "array", "items": arr}
    with pytest.raises(SchemaError, match=r"schema too deep: nesting exceeds 64 levels"):
        hs.strict_report({"type": "object", "properties": {"a": arr}, "required": ["a"]})


# --------------------------------------------------------------------------- providers


@pytest.mark.parametrize(
    ("name", "fn"),
    [("bedrock_rewrite.json", hs.bedrock), ("gemini_sanitize.json", hs.gemini)],
)
def test_provider_vectors_through_python(name: str, fn: Any) -> None:
    cases = load_shared_json(f"conformance/{name}")["cases"]
    checked = 0
    for case in cases:
        if isinstance(case["input"], dict):
            assert fn(case["input"]) == case["expect"]
            checked += 1
    assert checked >= 10


def test_br03_gemini_function_declaration() -> None:
    class Filter(BaseModel):
        model_config = ConfigDict(extra="forbid")
        field: str
        value: str

    class SearchArgs(BaseModel):
        filters: list[Filter]
        limit: int | None = None

    out = hs.gemini(SearchArgs.model_json_schema(), for_function=True)
    text = repr(out)
    for banned in ("additionalProperties", "$schema", "$defs", "$ref", "default"):
        assert banned not in text
    assert out["properties"]["limit"] == {"nullable": True, "title": "Limit", "type": "integer"}
    assert out["required"] == ["filters"]
    assert out["properties"]["filters"]["items"]["required"] == ["field", "value"]


def test_bedrock_collapses_discriminated_union() -> None:
    out = hs.bedrock(Owner.model_json_schema())
    pet = out["properties"]["pet"]
    assert pet["properties"]["kind"] == {"type": "string", "enum": ["cat", "dog"]}
    assert set(pet["properties"]) == {"kind", "meows", "barks"}
    assert "$defs" not in out


# --------------------------------------------------------------------------- the dict boundary
# strict() and strict_report() hand the dict itself to the native normalizer, which walks the
# Python objects (no JSON text) and builds a new dict; anything that is not a plain JSON tree
# goes through JSON text instead, with that path's conversions and errors.


def _bench_corpus() -> list[dict[str, Any]]:
    """The schemas of benches/bench_schema.py (the benchmark's own corpus)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benches" / "bench_schema.py"
    spec = importlib.util.spec_from_file_location("_bench_schema_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return [case.schema() for case in module.CORPUS]


def _all_schemas() -> list[dict[str, Any]]:
    pytest.importorskip("jsonschema")
    return [m.model_json_schema() for m, *_ in CORPUS] + _bench_corpus()


def _text_strict(schema: Any) -> Any:
    text = json.dumps(schema, ensure_ascii=False, allow_nan=False)
    return json.loads(_native.schema_strict(text))


def _containers(node: Any, out: set[int]) -> set[int]:
    if isinstance(node, dict):
        out.add(id(node))
        for v in node.values():
            _containers(v, out)
    elif isinstance(node, list):
        out.add(id(node))
        for v in node:
            _containers(v, out)
    return out


def _outcome(fn: Any, schema: Any) -> tuple[str, str]:
    """``("ok", JSON text of the result)`` or ``("SchemaError", message)``."""
    try:
        return "ok", json.dumps(fn(schema))
    except SchemaError as exc:
        return "SchemaError", str(exc)


def test_dict_path_matches_the_json_text_path_exactly() -> None:
    """Same output (key order and int/float included) and the same refusals, per schema."""
    schemas = _all_schemas()
    assert len(schemas) >= 100
    refused = 0
    for schema in schemas:
        outcome = _outcome(hs.strict, schema)
        assert outcome == _outcome(_text_strict, schema)
        if outcome[0] != "ok":
            refused += 1
            continue
        text_report = json.loads(_native.schema_strict_report(json.dumps(schema)))
        report = hs.strict_report(schema)
        assert json.dumps(report.schema) == json.dumps(text_report["schema"])
        assert [vars(r) for r in report.lossy] == text_report["lossy"]
        assert [vars(i) for i in report.non_strict] == text_report["non_strict"]
    assert refused >= 20


def test_strict_equals_strict_report_schema_over_the_bench_corpus() -> None:
    for schema in _bench_corpus():
        report = hs.strict_report(schema)
        if report.is_strict:
            assert json.dumps(hs.strict(schema)) == json.dumps(report.schema)
        else:
            with pytest.raises(SchemaError) as exc:
                hs.strict(schema)
            field = report.non_strict[0].field or "<root>"
            assert str(exc.value).startswith(f"{field}: ")


def test_dict_path_never_modifies_or_shares_the_input() -> None:
    for schema in _all_schemas():
        before = copy.deepcopy(schema)
        inside = _containers(schema, set())
        try:
            out: Any = hs.strict(schema)
        except SchemaError:
            out = hs.strict_report(schema).schema
        assert schema == before and json.dumps(schema) == json.dumps(before)
        assert not inside & _containers(out, set()), "output shares a dict or list with input"
    # the output can be changed freely
    schema = Person.model_json_schema()
    before = copy.deepcopy(schema)
    out = hs.strict(schema)
    out["$defs"]["Address"]["properties"].clear()
    out["required"].append("x")
    assert schema == before


def test_dict_path_reuses_the_input_strings() -> None:
    schema = Address.model_json_schema()
    out = hs.strict(schema)
    assert out["title"] is schema["title"]
    assert out["properties"]["street"]["title"] is schema["properties"]["street"]["title"]
    key = next(k for k in out["properties"] if k == "street")
    assert key is next(k for k in schema["properties"] if k == "street")


def test_values_keep_their_json_types() -> None:
    schema = {
        "type": "object",
        "title": "N",
        "properties": {
            "n": {"type": "number", "minimum": 0, "maximum": 1.0, "multipleOf": 0.25},
            "i": {"type": "integer", "exclusiveMinimum": -3, "maximum": 2**64 - 1},
            "e": {"enum": [1, 1.5, "a", True, None]},
        },
        "required": ["n", "i", "e"],
    }
    out = hs.strict(schema)
    n, i, e = (out["properties"][k] for k in ("n", "i", "e"))
    assert (type(n["minimum"]), type(n["maximum"]), n["multipleOf"]) == (int, float, 0.25)
    assert (i["exclusiveMinimum"], i["maximum"]) == (-3, 2**64 - 1)
    assert e["enum"] == [1, 1.5, "a", True, None]
    assert [type(v) for v in e["enum"]] == [int, float, str, bool, type(None)]
    assert json.dumps(out) == json.dumps(_text_strict(schema))


class _Str(str):
    pass


def _cyclic() -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "required": ["a"]}
    node["properties"] = {"a": node}
    return node


def _nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "array", "items": node}
    return {"type": "object", "properties": {"a": node}, "required": ["a"]}


_BASE: dict[str, Any] = {
    "type": "object",
    "title": "T",
    "properties": {"a": {"type": "integer", "maximum": 5}},
    "required": ["a"],
}


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        ("tuple", {**_BASE, "required": ("a",)}),
        ("dict subclass", collections.OrderedDict(_BASE)),
        ("str subclass", {**_BASE, "title": _Str("T")}),
        ("str subclass key", {**_BASE, "properties": {_Str("a"): {"type": "integer"}}}),
        ("non-str key", {**_BASE, "properties": {1: {"type": "integer"}}, "required": ["1"]}),
        (
            "int subclass",
            {**_BASE, "properties": {"a": {"type": "integer", "maximum": Level.HIGH}}},
        ),
        ("huge int", {**_BASE, "properties": {"a": {"type": "integer", "maximum": 2**70}}}),
        ("nan", {**_BASE, "properties": {"a": {"type": "number", "maximum": float("nan")}}}),
        ("set", {**_BASE, "properties": {"a": {"enum": {1, 2}}}}),
        ("cycle", _cyclic()),
        ("deep", _nested(120)),
    ],
)
def test_values_that_are_not_plain_json_take_the_text_path(name: str, schema: Any) -> None:
    assert _native.schema_strict_dict(schema) is None
    assert _native.schema_strict_report_dict(schema) is None
    try:
        expected = _outcome(_text_strict, schema)
    except (TypeError, ValueError):  # json.dumps refuses: strict() says so
        with pytest.raises(SchemaError, match="not JSON-serializable"):
            hs.strict(schema)
        return
    assert _outcome(hs.strict, schema) == expected
    if expected[0] == "ok":
        assert json.dumps(hs.strict_report(schema).schema) == expected[1]


def test_dict_path_refusals_and_budgets() -> None:
    # nesting within the JSON parser's limit: the dict path applies the depth budget itself
    for fn in (_native.schema_strict_dict, hs.strict):
        with pytest.raises(SchemaError, match=r"^schema too deep: nesting exceeds 64 levels"):
            fn(_nested(70))
    with pytest.raises(SchemaError, match="schema too large"):
        hs.strict(_bomb())
    with pytest.raises(SchemaError, match=r"^<root>: the schema is not a JSON object"):
        hs.strict([{"type": "object"}])  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="not a JSON object"):
        hs.strict_report("schema")  # type: ignore[arg-type]
    schema = Ticket.model_json_schema()
    with pytest.raises(SchemaError, match=r"^Ticket\.meta: free-form object") as exc:
        _native.schema_strict_dict(schema)
    assert type(exc.value) is SchemaError
