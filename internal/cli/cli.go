// Package cli is what gcjitter's commands share beyond their flags: the
// exit codes of DESIGN.md's contract, errors that carry them, and Code, the
// one place an error becomes an exit status. It imports no package of the
// module: the errors of the packages below the command name their own codes
// (ExitCoder), so every package may use these constants.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
)

// Exit codes (contract, see DESIGN.md).
const (
	OK          = 0
	Regression  = 1
	Usage       = 2
	Infra       = 3
	Interrupted = 130
)

// Report prints err (unless it was reported where it happened) as
// "gcjitter CMD: message" and returns its exit code.
func Report(stderr io.Writer, name string, err error) int {
	var ee *Error
	if err != nil && !(errors.As(err, &ee) && ee.Err == nil) {
		var se *SubcommandError
		if errors.As(err, &se) {
			name = se.Name
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
	}
	return Code(err)
}

// Error is an error with its exit code; err nil means it has been
// reported already (a regression, a flag error the flag package printed,
// failures the runner logged one by one).
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) ExitCode() int { return e.Code }

// ExitCoder is an error that knows its exit code: the package that defines
// an error says what it means (bad input, interrupted), so Code needs no
// import of it.
type ExitCoder interface{ ExitCode() int }

// Usagef is bad usage or bad input (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// InfraError is an infrastructure failure (exit 3).
func InfraError(err error) error { return &Error{Code: Infra, Err: err} }

// Silent is an exit status whose reason is already on the terminal.
func Silent(code int) error {
	if code == OK {
		return nil
	}
	return &Error{Code: code}
}

// SubcommandError names the subcommand an error came from (golden update).
type SubcommandError struct {
	Name string
	Err  error
}

func (e *SubcommandError) Error() string { return e.Err.Error() }
func (e *SubcommandError) Unwrap() error { return e.Err }

// Code is the one place errors become exit codes (DESIGN.md's
// contract): the outermost ExitCoder of err's chain says it, a cancelled
// context is an interrupt (130), and the rest are infrastructure (3).
func Code(err error) int {
	var coded ExitCoder
	switch {
	case err == nil:
		return OK
	case errors.As(err, &coded):
		return coded.ExitCode()
	case errors.Is(err, context.Canceled):
		return Interrupted
	}
	return Infra
}

// ParseFlags parses a command's flags wherever they stand, before or after
// its positional arguments (gcjitter fit DIR -o case.yaml), as users of Go
// tools and of pflag expect; "--" ends the flags. A nil error with done set
// means -h was answered; a flag error has been printed by the flag package.
func ParseFlags(fs *flag.FlagSet, args []string) (done bool, err error) {
	var positional []string
	for rest := args; ; {
		if done, err := parse(fs, rest); done {
			return true, err
		}
		after := fs.Args()
		if len(after) == 0 {
			break
		}
		if ended := len(rest) - len(after); ended > 0 && rest[ended-1] == "--" {
			positional = append(positional, after...)
			break
		}
		positional = append(positional, after[0])
		rest = after[1:]
	}
	// Parse again on "--" alone: fs.Args() is then the positional arguments.
	return false, fs.Parse(append([]string{"--"}, positional...))
}

// ParseCommandFlags parses the flags before a command line that runs
// another program (gcjitter trace -o DIR -- python train.py --epochs 1):
// the first positional argument starts the command, whose own flags are
// not gcjitter's.
func ParseCommandFlags(fs *flag.FlagSet, args []string) (done bool, err error) {
	return parse(fs, args)
}

func parse(fs *flag.FlagSet, args []string) (done bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return true, Silent(Usage)
	}
	return false, nil
}

// SizeFlag is -runs, -steps or -warmup: left out, the case's own size (or
// its baseline's), so its help shows no default; a value below min is an
// error, never a silent "use the default".
type SizeFlag struct {
	V   *int
	Min int
	set bool
}

func (f *SizeFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.Itoa(*f.V)
}

func (f *SizeFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want an integer")
	}
	if n < f.Min {
		return fmt.Errorf("must be >= %d (leave the flag out for the case's own size)", f.Min)
	}
	*f.V, f.set = n, true
	return nil
}

// FlagSet reports whether the flag name was given on the command line
// (its default and an explicit default differ in what they ask).
func FlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
