// SPDX-License-Identifier: Apache-2.0

package roundtrip

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuNanos returns the CPU time, user and system, that the threads of
// process pid have run so far, from /proc/<pid>/task/*/schedstat (whose
// first field is nanoseconds on a CPU). Threads that exited are not counted;
// the Go runtime keeps its threads, so over a benchmark none is lost.
func cpuNanos(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0, err
	}
	if len(tasks) == 0 {
		return 0, fmt.Errorf("no threads under /proc/%d/task", pid)
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			return 0, err
		}
		first, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		ns, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		sum += ns
	}
	return sum, nil
}
