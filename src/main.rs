fn main() -> std::process::ExitCode {
    holon_kit::cli::main()
}
