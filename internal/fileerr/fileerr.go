// Package fileerr is the error every reader of a user's file returns: the
// file, the line, and what is wrong, printed as file:line: message so
// editors and CI logs can jump to it.
package fileerr

import (
	"fmt"

	"github.com/gcjitter/gcjitter/internal/cli"
)

// Error is a problem at a line of a file (Line 0: the file as a whole).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ExitCode: a user's file is bad input.
func (e *Error) ExitCode() int { return cli.Usage }
