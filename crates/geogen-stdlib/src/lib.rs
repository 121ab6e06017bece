pub fn core_library() -> geogen_vm::Library {
    geogen_vm::Library::new()
}
