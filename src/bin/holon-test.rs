//! `holon-test`: the same command line as `cargo holon-test`, for authors without cargo (the
//! wheel and the npm packages carry this binary); one call into `holon-cli`.

fn main() -> std::process::ExitCode {
    holon_cli::main()
}
