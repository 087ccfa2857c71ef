// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// The checks of the checks: the Makefile's lint and check-generate targets,
// run for real (the repository's Makefile and scripts/spdx.sh) in a scratch
// git repository of a few files, must pass on a clean tree and fail on a
// file without an SPDX line, on unformatted Go code and on a generated file
// that is out of date. The Go toolchain and ocb are replaced by scripts
// (GO=, OCB=): vet is not what is checked here, and the scripts stand for
// the generators, writing what "up to date" means.

// lintScratch is a scratch repository holding the Makefile, scripts/spdx.sh
// and a small Go package, committed.
type lintScratch struct {
	t    *testing.T
	dir  string
	args []string // make variables that swap in the fake tools
}

const lintGoFile = `// SPDX-License-Identifier: Apache-2.0

package lintme

// Answer is formatted as gofmt wants it.
func Answer() int { return 42 }
`

// The generators' output when up to date: the fake ocb writes
// lintGenerated into cmd/otelcol-sdp/main.go (gofmt and the SPDX line are
// then applied by the Makefile), the fake go writes lintGolden into
// otlpwire/testdata/golden.json when asked to run a program.
const (
	lintGenerated = "// SPDX-License-Identifier: Apache-2.0\n\npackage main\n\nfunc main() {}\n"
	lintGolden    = "{\"vectors\": []}\n"
)

func newLintScratch(t *testing.T) *lintScratch {
	t.Helper()
	root := testbin.RepoRoot(t)
	dir := t.TempDir()
	tools := t.TempDir()
	for _, f := range []string{"Makefile", "scripts/spdx.sh"} {
		lintCopyFile(t, filepath.Join(root, f), filepath.Join(dir, f))
	}
	s := &lintScratch{t: t, dir: dir}
	s.write("go.mod", "module example.com/lintme\n\ngo 1.26\n")
	s.write("lintme.go", lintGoFile)
	s.write("builder-config.yaml", "# read by the fake ocb only\n")
	s.write("cmd/otelcol-sdp/main.go", lintGenerated)
	s.write("otlpwire/testdata/golden.json", lintGolden)

	fakeGo := filepath.Join(tools, "go")
	lintWriteScript(t, fakeGo, `#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stands for go: "run" is a generator writing otlpwire's golden file, the rest
# (vet, env) succeeds doing nothing.
if [ "$1" = run ]; then mkdir -p otlpwire/testdata && printf '%s' '`+lintGolden+`' > otlpwire/testdata/golden.json; fi
exit 0
`)
	fakeOCB := filepath.Join(tools, "ocb")
	lintWriteScript(t, fakeOCB, `#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stands for ocb: writes the distribution's source.
mkdir -p cmd/otelcol-sdp && printf '%s' '`+lintGenerated+`' > cmd/otelcol-sdp/main.go
`)
	s.args = []string{
		"GO=" + fakeGo, "OCB=" + fakeOCB, "OCB_STAMP=", "MDATAGEN_STAMP=",
		// No library modules or distribution module to vet in the scratch tree.
		"LIB_MODULES=", "DIST_DIR=cmd/otelcol-sdp",
	}
	s.git("init", "-q")
	s.commit()
	return s
}

func (s *lintScratch) write(rel, content string) {
	s.t.Helper()
	p := filepath.Join(s.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *lintScratch) git(args ...string) {
	s.t.Helper()
	args = append([]string{"-c", "user.name=lint", "-c", "user.email=lint@example.com", "-c", "commit.gpgsign=false"}, args...)
	testbin.Run(s.t, s.dir, nil, "git", args...)
}

// commit records the work tree, new files included.
func (s *lintScratch) commit() {
	s.t.Helper()
	s.git("add", "-A")
	s.git("commit", "-q", "--allow-empty", "-m", "scratch")
}

// make runs a target of the real Makefile and returns its output and
// whether it succeeded.
func (s *lintScratch) make(target string) (string, bool) {
	s.t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", target}, s.args...)...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			s.t.Fatalf("make %s: %v", target, err)
		}
	}
	return string(out), err == nil
}

func (s *lintScratch) mustPass(target string) {
	s.t.Helper()
	if out, ok := s.make(target); !ok {
		s.t.Fatalf("make %s fails on a clean scratch tree:\n%s", target, out)
	}
}

func (s *lintScratch) mustFail(target string, says ...string) {
	s.t.Helper()
	out, ok := s.make(target)
	if ok {
		s.t.Fatalf("make %s passes; it must fail:\n%s", target, out)
	}
	for _, want := range says {
		if !strings.Contains(out, want) {
			s.t.Fatalf("make %s fails without naming %q:\n%s", target, want, out)
		}
	}
}

func TestLintFailsOnAFileWithoutSPDX(t *testing.T) {
	s := newLintScratch(t)
	s.mustPass("lint")
	s.write("nolicence.go", "package lintme\n\nconst x = 1\n")
	s.commit()
	s.mustFail("lint", "nolicence.go")
	// A shell script is a source too.
	s.write("nolicence.go", "// SPDX-License-Identifier: Apache-2.0\n\npackage lintme\n\nconst x = 1\n")
	s.write("scripts/tool.sh", "#!/usr/bin/env bash\necho hi\n")
	s.commit()
	s.mustFail("lint", "scripts/tool.sh")
}

func TestLintFailsOnUnformattedCode(t *testing.T) {
	s := newLintScratch(t)
	s.mustPass("lint")
	s.write("lintme.go", strings.Replace(lintGoFile, "func Answer() int { return 42 }", "func Answer()   int {\nreturn 42 }", 1))
	s.commit()
	s.mustFail("lint", "gofmt needed", "lintme.go")
	// Not committed but tracked: gofmt reads the work tree.
	s.write("lintme.go", lintGoFile)
	s.commit()
	s.mustPass("lint")
	s.write("lintme.go", strings.Replace(lintGoFile, "return 42", "return  42", 1))
	s.mustFail("lint", "gofmt needed", "lintme.go")
}

func TestCheckGenerateFailsOnAStaleGeneratedFile(t *testing.T) {
	s := newLintScratch(t)
	s.mustPass("check-generate")
	for _, stale := range []string{"cmd/otelcol-sdp/main.go", "otlpwire/testdata/golden.json"} {
		t.Run(stale, func(t *testing.T) {
			s.t = t
			orig, err := os.ReadFile(filepath.Join(s.dir, stale))
			if err != nil {
				t.Fatal(err)
			}
			s.write(stale, string(orig)+"\n// edited by hand\n")
			s.commit()
			s.mustFail("check-generate", "make generate", stale)
			// Regenerated and committed, the tree passes again.
			s.write(stale, string(orig))
			s.commit()
			s.mustPass("check-generate")
		})
	}
}

func lintCopyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

func lintWriteScript(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
