package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
)

// traceCommandsFile, under a results directory's trace/, records the
// command each traced case was traced from, so that two scripts never
// become runs of one case.
const traceCommandsFile = "commands.json"

// JobIdentity is what makes two traced commands the same job: the script
// (absolute) and what follows it; the interpreter or launcher before it
// is not part of it (python3 and /usr/bin/python3 trace the same job).
// A command without a script is compared whole.
func JobIdentity(command []string) string {
	switch i, module := jobScript(command); {
	case i < 0:
		return strings.Join(command, " ")
	case module:
		return strings.Join(command[i-1:], " ")
	default:
		return strings.Join(append([]string{absPath(command[i])}, command[i+1:]...), " ")
	}
}

// jobScript is where a traced command names its script: the first .py
// argument (python train.py, torchrun ... train.py), or the module after
// -m (module true); -1 when it names neither.
func jobScript(command []string) (i int, module bool) {
	for i, a := range command {
		if strings.HasSuffix(a, ".py") {
			return i, false
		}
		if a == "-m" && i+1 < len(command) {
			return i + 1, true
		}
	}
	return -1, false
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// TraceCaseName is the case a traced command's run goes to in the results
// directory out. Named (-case): that case, unless it holds runs of
// another command. Default: the script's name (train.py: train), or the
// script's directory and name when that case holds another script's runs
// or the name is only an entry point's (examples/dcgan/main.py:
// dcgan-main). A case that holds runs not traced from this command is
// refused, naming both commands.
func TraceCaseName(out, named string, command []string) (string, error) {
	id := JobIdentity(command)
	known, err := readTraceCommands(out)
	if err != nil {
		return "", err
	}
	var cases []string
	m, err := results.ReadManifest(out)
	switch {
	case err == nil:
		for _, c := range m.Cases {
			cases = append(cases, c.Name)
		}
	case !errors.Is(err, os.ErrNotExist):
		// Found now, not after the job has run.
		return "", &results.InputError{Msgs: []string{err.Error()}}
	}
	// free: the case is new, or holds this job's runs only.
	free := func(name string) (bool, string) {
		if other, ok := known[name]; ok {
			return other == id, other
		}
		if slices.Contains(cases, name) {
			return false, "(not traced by gcjitter trace, or traced before commands were recorded)"
		}
		return true, ""
	}
	refuse := func(name, other string) error {
		return fmt.Errorf("case %q in %s holds runs of another command:\n  %s\nnot of\n  %s\nname this one's case with -case NAME, or trace it into another -o directory", name, out, other, id)
	}
	if named != "" {
		if ok, other := free(named); !ok {
			return "", refuse(named, other)
		}
		return named, nil
	}
	stem, parent := scriptNames(command)
	names := []string{stem}
	if parent != "" {
		names = append(names, parent+"-"+stem)
		if slices.Contains(entryPointNames, stem) {
			names = names[1:]
		}
	}
	for _, name := range names {
		if ok, _ := free(name); ok {
			return name, nil
		}
	}
	_, other := free(names[0])
	return "", refuse(names[0], other)
}

// entryPointNames are script names that say nothing of the job (every
// pytorch/examples script is main.py): such a script's case is named by
// its directory too from the start.
var entryPointNames = []string{"main", "__main__"}

// scriptNames are the traced script's name and its directory's
// (examples/dcgan/main.py: main, dcgan; -m pkg.train: train, pkg).
func scriptNames(command []string) (stem, parent string) {
	switch i, module := jobScript(command); {
	case i < 0:
		return cases.TraceVariant, ""
	case module:
		parts := strings.Split(command[i], ".")
		if len(parts) > 1 {
			return parts[len(parts)-1], parts[len(parts)-2]
		}
		return parts[0], ""
	default:
		abs := absPath(command[i])
		return strings.TrimSuffix(filepath.Base(abs), ".py"), filepath.Base(filepath.Dir(abs))
	}
}

func readTraceCommands(out string) (map[string]string, error) {
	path := filepath.Join(out, "trace", traceCommandsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	known := map[string]string{}
	if err := json.Unmarshal(data, &known); err != nil {
		return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s: %v: remove it to trace into %s again (it only names the command of each traced case)", path, err, out)}}
	}
	return known, nil
}

// recordTraceCommand notes that caseName's runs are command's.
func recordTraceCommand(out, caseName string, command []string) error {
	known, err := readTraceCommands(out)
	if err != nil {
		return err
	}
	known[caseName] = JobIdentity(command)
	data, err := json.MarshalIndent(known, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(out, "trace", traceCommandsFile), append(data, '\n'), 0o644)
}
