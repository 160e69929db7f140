package shellgen

// RecordFields exposes the record kinds Decode knows, to the tests.
func RecordFields() map[Kind]int {
	m := map[Kind]int{}
	for k, f := range fields {
		m[k] = f.n
	}
	return m
}

// LibFunc returns the text of the library function name ("" if none).
func LibFunc(name string) string { return library().text[name] }
