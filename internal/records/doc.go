// Package records decodes what bgjob's scripts print between their
// markers: one line of tab-separated fields a record (the vocabulary is
// Kind, with the number of fields of each), log data as a D record
// followed by exactly its length in raw bytes. Handler is the one place
// that assembles records into observations of jobs, refusals and log
// bytes. The vocabulary is internal: the scripts of package shellgen and
// this decoder change together.
package records
