//! Policy matching: the first line is the rules JSON, the rest the command. Never panics, and
//! the verdict is one of the four values.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (rules, command) = text.split_once('\n').unwrap_or(("{}", &text));
    let policy = helikon_shell::CommandPolicy::from_json(rules).or_else(|_| {
        helikon_shell::CommandPolicy::from_json(r#"{"deny":["rm","curl"],"allow":["git","ls"]}"#)
    });
    if let Ok(p) = policy {
        let v = p.check(command);
        assert!(matches!(v.verdict, "deny" | "ask" | "allow" | "no_match"));
        let _ = p.check_write(command);
    }
});
