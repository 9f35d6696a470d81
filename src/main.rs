//! `cargo-holon-test`: the command line of holon-kit, one call into `holon-cli`.

fn main() -> std::process::ExitCode {
    holon_cli::main()
}
