package shellgen

// LibFunc returns the text of the library function name ("" if none).
func LibFunc(name string) string { return library().text[name] }
