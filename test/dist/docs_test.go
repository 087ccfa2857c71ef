// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dist

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor"
	"github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// docRow is one row of a reference table in docs/configuration.md: the
// option names of its first cell and the default each one is given, ""
// when the row gives none that can be compared (required, none, prose).
type docRow struct {
	names    []string
	defaults []string
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	// inlineDefault is "`-name` (`default`)" in a first cell.
	inlineDefault = regexp.MustCompile("`([^`]+)` \\(`([^`]+)`\\)")
	parenthesized = regexp.MustCompile(`\([^)]*\)`)
)

// docTable returns the rows of the first table under the "## heading"
// section of docs/configuration.md.
func docTable(t *testing.T, heading string) []docRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testbin.RepoRoot(t), "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/configuration.md has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []docRow
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 4 || strings.HasPrefix(cells[1], "---") || strings.TrimSpace(cells[1]) == "field" || strings.TrimSpace(cells[1]) == "flag" {
			continue
		}
		var row docRow
		inline := map[string]string{}
		for _, m := range inlineDefault.FindAllStringSubmatch(cells[1], -1) {
			inline[m[1]] = m[2]
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if slices.Contains(slices.Collect(mapValues(inline)), m[1]) {
				continue // an inline default, not a name
			}
			row.names = append(row.names, m[1])
		}
		defaults := backticked.FindAllStringSubmatch(cells[2], -1)
		// Only a cell of values is compared: "`10s`, `5m`" or "`67108864`
		// (64 MiB)", not "`service.instance.id`, else the host name".
		prose := parenthesized.ReplaceAllString(backticked.ReplaceAllString(cells[2], ""), "")
		values := strings.HasPrefix(strings.TrimSpace(cells[2]), "`") && !strings.ContainsFunc(prose, unicode.IsLetter)
		for i, name := range row.names {
			d := inline[name]
			if len(defaults) == len(row.names) && values {
				d = defaults[i][1]
			}
			row.defaults = append(row.defaults, d)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatalf("docs/configuration.md: no table under %q", heading)
	}
	return rows
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestConfigurationDocMatchesTheConfigStructs checks docs/configuration.md
// against the components' Config structs: every option the struct takes is
// documented, every documented option exists, and every default the page
// states is what the factory's default configuration holds.
func TestConfigurationDocMatchesTheConfigStructs(t *testing.T) {
	for _, c := range []struct {
		heading string
		config  component.Config
	}{
		{"wirecount processor", wirecountprocessor.NewFactory().CreateDefaultConfig()},
		{"sdpshard processor", sdpshardprocessor.NewFactory().CreateDefaultConfig()},
		{"sdpshard processor: ejection", sdpshardEjectionDefaults()},
		{"wirestage extension", wirestageextension.NewFactory().CreateDefaultConfig()},
	} {
		t.Run(c.heading, func(t *testing.T) {
			fields := configFields(reflect.ValueOf(c.config).Elem())
			documented := map[string]bool{}
			for _, row := range docTable(t, c.heading) {
				for i, name := range row.names {
					documented[name] = true
					v, ok := fields[name]
					if !ok {
						t.Errorf("the page documents %q, which the Config struct does not take", name)
						continue
					}
					if d := row.defaults[i]; d != "" && !sameDefault(d, v) {
						t.Errorf("%s: the page says the default is %q, the factory's default is %v", name, d, v.Interface())
					}
				}
			}
			for name := range fields {
				if !documented[name] {
					t.Errorf("option %q of the Config struct is not on the page", name)
				}
			}
		})
	}
}

// sdpshardEjectionDefaults is what an empty ejection block enables.
func sdpshardEjectionDefaults() component.Config {
	cfg := sdpshardprocessor.NewFactory().CreateDefaultConfig().(*sdpshardprocessor.Config)
	return cfg.Ejection.GetOrInsertDefault()
}

// TestConfigurationDocMatchesTheSidecarFlags checks the sdp-sidecar table
// of docs/configuration.md against the flags the built binary prints.
func TestConfigurationDocMatchesTheSidecarFlags(t *testing.T) {
	out, _ := exec.Command(testbin.Path(t, testbin.SidecarEnv), "-h").CombinedOutput()
	flags := map[string]string{} // name → default, "" when none
	var last string
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			last, _, _ = strings.Cut(strings.TrimSpace(rest), " ")
			flags[last] = ""
			continue
		}
		if _, d, ok := strings.Cut(line, "(default "); ok && last != "" {
			flags[last] = strings.Trim(strings.TrimSuffix(strings.TrimSpace(d), ")"), `"`)
		}
	}
	if len(flags) < 10 {
		t.Fatalf("sdp-sidecar -h listed %d flags:\n%s", len(flags), out)
	}
	documented := map[string]bool{}
	for _, row := range docTable(t, "sdp-sidecar") {
		for i, name := range row.names {
			name = strings.TrimPrefix(name, "-")
			documented[name] = true
			d, ok := flags[name]
			if !ok {
				t.Errorf("the page documents -%s, which sdp-sidecar does not take", name)
				continue
			}
			if want := row.defaults[i]; want != "" && d != "" && !sameDefault(want, reflect.ValueOf(d)) {
				t.Errorf("-%s: the page says the default is %q, sdp-sidecar says %q", name, want, d)
			}
		}
	}
	for name := range flags {
		if !documented[name] {
			t.Errorf("flag -%s of sdp-sidecar is not on the page", name)
		}
	}
}

// configFields returns a Config struct's options by their mapstructure
// names; squashed embedded structs contribute theirs.
func configFields(v reflect.Value) map[string]reflect.Value {
	fields := map[string]reflect.Value{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case opts == "squash":
			for k, fv := range configFields(v.Field(i)) {
				fields[k] = fv
			}
		case tag != "" && tag != "-" && f.IsExported():
			fields[tag] = v.Field(i)
		}
	}
	return fields
}

// sameDefault compares a default as the page writes it with a value: a
// duration by its length (1m and 1m0s agree), a list by its elements
// ("[a, b]"), anything else by its printed form.
func sameDefault(doc string, v reflect.Value) bool {
	got := fmt.Sprint(v.Interface())
	if d, err := time.ParseDuration(doc); err == nil {
		g, err := time.ParseDuration(got)
		return err == nil && g == d
	}
	if v.Kind() == reflect.Slice {
		got = strings.ReplaceAll(got, " ", ", ")
	}
	return doc == got
}

// TestOperationsDocListsEveryMetric checks that docs/operations.md names
// every metric the components' generated documentation.md declares, in
// full or, in a row that lists a family, as its `_suffix`.
func TestOperationsDocListsEveryMetric(t *testing.T) {
	root := testbin.RepoRoot(t)
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	generated, err := filepath.Glob(filepath.Join(root, "*", "*", "documentation.md"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("no documentation.md found (%v)", err)
	}
	family := regexp.MustCompile(`^otelcol_(?:processor|extension)_[a-z]+_`)
	metrics := 0
	for _, path := range generated {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			name, ok := strings.CutPrefix(strings.TrimSpace(line), "### ")
			if !ok {
				continue
			}
			metrics++
			short := "`_" + strings.TrimPrefix(name, family.FindString(name)) + "`"
			if !strings.Contains(string(ops), name) && !strings.Contains(string(ops), short) {
				t.Errorf("%s declares %s, which docs/operations.md does not list", filepath.ToSlash(path[len(root)+1:]), name)
			}
		}
	}
	if metrics < 10 {
		t.Fatalf("only %d metrics found in %v", metrics, generated)
	}
}
