package runner

import (
	"os"
	"runtime"
	"sort"
	"strings"
)

// inheritedEnv are the variables a worker inherits from gcjitter's own
// environment; everything else is dropped, so a stray setting on one host
// (PYTHONMALLOC, a debug flag, a different thread count) cannot change what
// is measured. A case adds what it needs in env:.
var inheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
	"LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX",
	"CUDA_HOME", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
	"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
	"ASCEND_RT_VISIBLE_DEVICES",
}

// inheritedPrefixes are inherited as whole families (locale, Ascend's CANN).
var inheritedPrefixes = []string{"LC_"}

// WorkerEnv builds a worker's environment: the allowlist from parent, then
// the runner's fixed settings, then extra (the case's and the variant's env,
// in that order, later winning).
func WorkerEnv(parent []string, hashSeed uint32, threads int, extra ...map[string]string) []string {
	env := map[string]string{}
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if inherited(k) {
			env[k] = v
		}
	}
	env["PYTHONHASHSEED"] = itoa(int(hashSeed))
	env["PYTHONDONTWRITEBYTECODE"] = "1"
	env["PYTHONUNBUFFERED"] = "1"
	if threads > 0 {
		t := itoa(threads)
		env["OMP_NUM_THREADS"], env["MKL_NUM_THREADS"], env["OPENBLAS_NUM_THREADS"] = t, t, t
	}
	for _, m := range extra {
		for k, v := range m {
			env[k] = v
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func inherited(k string) bool {
	for _, a := range inheritedEnv {
		if k == a {
			return true
		}
	}
	for _, p := range inheritedPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// ParentEnv is this process's environment, for WorkerEnv.
func ParentEnv() []string { return os.Environ() }

func numCPU() int { return runtime.NumCPU() }
