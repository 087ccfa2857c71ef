// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	keyword string // upper case: FROM, RUN, COPY, ...
	args    string
}

// stage is one FROM block of a multi-stage Dockerfile.
type stage struct {
	from, name   string
	instructions []instruction
}

func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []stage
	var pending string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if strings.HasPrefix(line, "#") || (line == "" && pending == "") {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending += cont + " "
			continue
		}
		line = pending + line
		pending = ""
		keyword, args, _ := strings.Cut(line, " ")
		in := instruction{keyword: strings.ToUpper(keyword), args: strings.TrimSpace(args)}
		if in.keyword == "FROM" {
			fields := strings.Fields(in.args)
			s := stage{from: fields[0]}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				s.name = fields[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			continue // ARG before the first FROM
		}
		stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, in)
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return stages
}

// TestDockerfileBuildsTheMakefileBinaries runs the RUN commands of the
// Dockerfile's build stage (its /out directory redirected to a temporary
// one; no container engine is needed) and checks that they produce the same
// static binaries as `make build`, and that the final stage puts them where
// the Helm chart and the sidecar container expect them, as a non-root user.
func TestDockerfileBuildsTheMakefileBinaries(t *testing.T) {
	makeBinaries := map[string]string{
		"otelcol-sdp": testbin.Path(t, testbin.CollectorEnv),
		"sdp-sidecar": testbin.Path(t, testbin.SidecarEnv),
	}
	root := testbin.RepoRoot(t)
	stages := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a runtime stage", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	out := t.TempDir()
	var env []string
	ran := 0
	for _, in := range build.instructions {
		switch in.keyword {
		case "ENV":
			env = append(env, strings.Fields(in.args)...)
		case "WORKDIR":
			if in.args != "/src" {
				t.Fatalf("build stage WORKDIR %s: the test runs the RUN commands at the repository root, copied to /src", in.args)
			}
		case "RUN":
			script := strings.ReplaceAll(in.args, "/out/", out+"/")
			cmd := testbin.Command(root, env, "bash", "-euo", "pipefail", "-c", script)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("Dockerfile RUN %s: %v\n%s", in.args, err, b)
			}
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("the build stage has no RUN command")
	}

	for name, made := range makeBinaries {
		docker := filepath.Join(out, name)
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(docker); err != nil {
				t.Fatalf("the build stage did not produce /out/%s: %v", name, err)
			}
			if got, want := buildInfo(t, docker), buildInfo(t, made); got != want {
				t.Errorf("build info differs:\nDockerfile:\n%s\nMakefile:\n%s", got, want)
			}
			if got, want := fileSum(t, docker), fileSum(t, made); got != want {
				t.Errorf("the Dockerfile's %s differs byte for byte from the Makefile's (same build info: did the sources change between the two builds?)", name)
			}
			assertStatic(t, docker)
			// The image's binary must run on its own (distroless has no libc).
			if b, err := exec.Command(docker, "-h").CombinedOutput(); err != nil && !bytes.Contains(b, []byte("Usage")) {
				t.Errorf("%s -h: %v\n%s", name, err, b)
			}
		})
	}

	// The runtime stage: the Collector at the image root (the chart runs
	// /<command.name>), the sidecar beside it, not root.
	copies := map[string]string{}       // image path <- build stage path
	contextFiles := map[string]string{} // image path <- repository path
	var user, entrypoint, command string
	for _, in := range final.instructions {
		switch in.keyword {
		case "COPY":
			fields := strings.Fields(in.args)
			switch {
			case len(fields) == 3 && strings.HasPrefix(fields[0], "--from="):
				copies[fields[2]] = fields[1]
			case len(fields) == 2:
				contextFiles[fields[1]] = fields[0]
			}
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "CMD":
			command = in.args
		}
	}
	for dst, src := range map[string]string{"/otelcol-sdp": "/out/otelcol-sdp", "/sdp-sidecar": "/out/sdp-sidecar"} {
		if copies[dst] != src {
			t.Errorf("runtime stage copies %q to %s, want %s", copies[dst], dst, src)
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); user == "" || uid == "0" || uid == "root" {
		t.Errorf("runtime stage USER %q: want a non-root user", user)
	}
	if entrypoint != `["/otelcol-sdp"]` {
		t.Errorf(`ENTRYPOINT %s, want ["/otelcol-sdp"]`, entrypoint)
	}

	// The image must start as it is: the file CMD names is copied into the
	// image from the repository, and the built Collector accepts it.
	var args []string
	if err := json.Unmarshal([]byte(command), &args); err != nil {
		t.Fatalf("CMD %s: want the JSON form: %v", command, err)
	}
	var config string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			config = v
		}
	}
	if config == "" {
		t.Fatalf("CMD %s names no --config=FILE", command)
	}
	src, ok := contextFiles[config]
	if !ok {
		t.Fatalf("CMD names %s, but the runtime stage copies no file there (copies: %v)", config, contextFiles)
	}
	cmd := exec.Command(makeBinaries["otelcol-sdp"], "validate", "--config", filepath.Join(root, src))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the image's default configuration %s (from %s) does not validate: %v\n%s", config, src, err, b)
	}
}

// buildInfo is `go version -m` of a binary without its first line (which
// names the file).
func buildInfo(t *testing.T, bin string) string {
	t.Helper()
	b, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	_, info, _ := strings.Cut(string(b), "\n")
	return info
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// assertStatic fails unless bin is an ELF executable without an interpreter
// or dynamic section, i.e. runs without libc.
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v program header)", bin, p.Type)
		}
	}
}

// TestDockerfileCopiesReplacedModulesBeforeDownloading keeps the build
// stage's first `go mod download` working in a real build, where only the
// files copied so far exist (the test above runs the RUN lines in the full
// tree): the go.mod of every module a go.mod replaces with a directory of the
// repository must be copied before the first RUN.
func TestDockerfileCopiesReplacedModulesBeforeDownloading(t *testing.T) {
	root := testbin.RepoRoot(t)
	build := parseDockerfile(t, filepath.Join(root, "Dockerfile"))[0]
	copied := map[string]bool{}
	for _, in := range build.instructions {
		if in.keyword == "RUN" {
			break
		}
		if in.keyword == "COPY" {
			fields := strings.Fields(in.args)
			for _, src := range fields[:len(fields)-1] {
				copied[filepath.Clean(src)] = true
			}
		}
	}
	for _, gomod := range []string{"go.mod", "cmd/otelcol-sdp/go.mod"} {
		if !copied[gomod] {
			t.Errorf("the build stage does not copy %s before its first RUN", gomod)
		}
		b, err := os.ReadFile(filepath.Join(root, gomod))
		if err != nil {
			t.Fatal(err)
		}
		replaces := 0
		for _, line := range strings.Split(string(b), "\n") {
			_, target, ok := strings.Cut(line, "=>")
			if fields := strings.Fields(target); ok && len(fields) == 1 && strings.HasPrefix(fields[0], ".") {
				replaces++
				dir := filepath.Join(filepath.Dir(gomod), fields[0])
				if want := filepath.Join(dir, "go.mod"); !copied[want] {
					t.Errorf("%s replaces a module with %s, but the build stage does not copy %s before its first RUN", gomod, fields[0], want)
				}
			}
		}
		if gomod == "go.mod" && replaces == 0 {
			t.Error("go.mod replaces no module with a directory: the libraries are expected as nested modules")
		}
	}
}
