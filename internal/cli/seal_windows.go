package cli

// sealDescriptors does nothing on Windows, where a child inherits only the
// handles it is given.
func sealDescriptors() {}
