package bgjob

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePTYSize reads a terminal size written COLSxROWS (e.g. 120x40), each
// side 1 to MaxPTYSide, for Spec's PTYCols and PTYRows: run's
// --pty-size and job_start's pty_size.
func ParsePTYSize(s string) (cols, rows int, err error) {
	c, r, ok := strings.Cut(strings.ToLower(s), "x")
	cols, err1 := strconv.Atoi(c)
	rows, err2 := strconv.Atoi(r)
	if !ok || err1 != nil || err2 != nil || cols < 1 || rows < 1 || cols > MaxPTYSide || rows > MaxPTYSide {
		return 0, 0, fmt.Errorf("%q is not a terminal size (want COLSxROWS, e.g. 120x40, each 1 to %d)", s, MaxPTYSide)
	}
	return cols, rows, nil
}
