//! Analyse one hostile construct repeated to a size, for instruction counting:
//! `valgrind --tool=callgrind scale 'find . -exec ' 100000` (callgrind counts instructions
//! reproducibly on a loaded machine, where wall time does not). A third argument `baseline`
//! builds the text and skips the analysis, so its cost can be subtracted. `\n` in the
//! construct stands for a newline. Used by `benches/bench_shell.py --instructions`.
fn main() {
    let mut args = std::env::args().skip(1);
    let unit = args
        .next()
        .unwrap_or_else(|| "find . -exec ".to_string())
        .replace("\\n", "\n");
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let baseline = args.next().as_deref() == Some("baseline");
    let mut text = unit.repeat(n / unit.len().max(1) + 1);
    let mut cut = n.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    if baseline {
        println!("{} bytes", text.len());
        return;
    }
    let a = helikon_shell::analyze_packed(&text);
    println!(
        "{} bytes: {} commands, {} unanalysable",
        text.len(),
        a.commands().count(),
        a.unanalysable.len()
    );
}
