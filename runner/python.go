package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// PythonEnv is the environment variable that names the interpreter when no
// -python flag does.
const PythonEnv = "GCJITTER_PYTHON"

// probeTimeout bounds one interpreter probe; importing torch takes seconds.
const probeTimeout = 120 * time.Second

// NoPythonError lists every interpreter tried and why each was refused.
type NoPythonError struct {
	Tried     []string
	NeedTorch bool
}

func (e *NoPythonError) Error() string {
	want := "a Python interpreter"
	if e.NeedTorch {
		want = "a Python interpreter that imports torch"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no usable interpreter: need %s. Tried:\n", want)
	for _, t := range e.Tried {
		fmt.Fprintf(&b, "  %s\n", t)
	}
	b.WriteString("Fix: run scripts/setup.sh (on Debian it installs python3-torch), or pass -python PATH or set " + PythonEnv + "=PATH to an interpreter with torch")
	return b.String()
}

// FindPython picks the interpreter for the workers: explicit (the -python
// flag), then $GCJITTER_PYTHON, then python3 on PATH, then /usr/bin/python3.
// A named interpreter must work; otherwise the first candidate that starts
// (and imports torch, when needTorch) wins.
func FindPython(ctx context.Context, explicit string, needTorch bool) (string, error) {
	p, _, err := ChoosePython(ctx, explicit, "", needTorch)
	return p, err
}

// ChoosePython is FindPython with a case's own python: setting, which comes
// after the flag and $GCJITTER_PYTHON. It also says which rule chose.
func ChoosePython(ctx context.Context, flagPython, casePython string, needTorch bool) (path, from string, err error) {
	e := &NoPythonError{NeedTorch: needTorch}
	try := func(label, path string) (string, bool) {
		resolved, err := exec.LookPath(path)
		if err != nil {
			e.Tried = append(e.Tried, fmt.Sprintf("%s %s: not found", label, path))
			return "", false
		}
		if err := probe(ctx, resolved, needTorch); err != nil {
			e.Tried = append(e.Tried, fmt.Sprintf("%s %s: %v", label, resolved, err))
			return "", false
		}
		return resolved, true
	}
	for _, named := range []struct{ label, path string }{
		{"-python", flagPython}, {"$" + PythonEnv, os.Getenv(PythonEnv)}, {"case python:", casePython},
	} {
		if named.path == "" {
			continue
		}
		if p, ok := try(named.label, named.path); ok {
			return p, named.label, nil
		}
		return "", "", e // a named interpreter that fails is an error, not a hint
	}
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if p, ok := try("candidate", c); ok {
			return p, "probe of " + c, nil
		}
	}
	return "", "", e
}

func probe(ctx context.Context, python string, needTorch bool) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	code := "import sys; assert sys.version_info >= (3, 8), 'Python %d.%d is older than 3.8' % sys.version_info[:2]"
	if needTorch {
		code += "; import torch"
	}
	out, err := exec.CommandContext(ctx, python, "-c", code).CombinedOutput()
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("did not answer within %v", probeTimeout)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; last != "" {
		return errors.New(last) // e.g. ModuleNotFoundError: No module named 'torch'
	}
	return err
}
