// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the repository's source files (tracked, or untracked and
// not ignored: no binaries, tools or .git) into a new temporary directory.
func copyTree(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	dst := t.TempDir()
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a regular file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// diff returns a unified diff of two files or directories, for messages.
func diff(a, b string) string {
	out, _ := exec.Command("diff", "-ru", a, b).CombinedOutput()
	const limit = 8000
	if len(out) > limit {
		out = append(out[:limit], "\n... (diff cut)"...)
	}
	return string(out)
}
