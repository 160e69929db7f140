package shellgen

// LibFunc returns the text of the library function name ("" if none).
func LibFunc(name string) string { return library().text[name] }

// LibClosure returns the text of the library functions that script
// calls, and of those they call.
func LibClosure(script string) string {
	var b []byte
	for _, name := range library().need(script) {
		b = append(b, library().text[name]...)
	}
	return string(b)
}
