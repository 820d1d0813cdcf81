//! Amplified input: the fuzz input is a unit of shell text and a repeat count, and the unit
//! repeated to up to 256 KB is analysed on a thread with a 256 KiB stack. No panic, no stack
//! overflow (recursion the input controls would crash that small stack), and bounded work:
//! libFuzzer's `-timeout` (10 s in scripts/fuzz-smoke) flags any repetition the analysis is
//! super-linear on, and the result holds at most `max_words` words. A result that runs `rm`
//! is always denied, and an unanalysable one never allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&count, unit)) = data.split_first() else {
        return;
    };
    let unit = String::from_utf8_lossy(unit).into_owned();
    if unit.is_empty() {
        return;
    }
    // 0..=255 scaled to a target size of up to 256 KB (1 MB is covered by the Python property
    // test; smaller inputs give the fuzzer more runs in its time box).
    let target = (usize::from(count) + 1) * 1024;
    let text = unit.repeat(target / unit.len() + 1);
    let worker = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let a = helikon_shell::analyze(&text);
            let words: usize = a.commands.iter().map(|c| c.argv.len()).sum();
            assert!(words <= helikon_shell::DEFAULT_MAX_WORDS);
            let p = helikon_shell::CommandPolicy::from_json(
                r#"{"deny":["rm"],"allow":["ls","echo"],"default_guards":false}"#,
            )
            .ok();
            if let Some(p) = p {
                let v = p.check_analysis(&a);
                if a.commands.iter().any(|c| c.program == "rm") {
                    assert_eq!(v.verdict, "deny");
                }
                if !a.unanalysable.is_empty() {
                    assert_ne!(v.verdict, "allow");
                }
            }
        });
    if let Ok(handle) = worker {
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
});
