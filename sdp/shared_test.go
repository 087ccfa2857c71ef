package sdp

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sharedDir finds the contract folder shared/sdp that CI checks out beside
// the repository, walking up from the package directory. It fails the test
// when the folder is missing: the contract is not optional.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		candidate := filepath.Join(dir, "shared", "sdp")
		if _, err := os.Stat(filepath.Join(candidate, "otlp_frames.sdp")); err == nil {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("contract folder shared/sdp not found beside the repository or any parent of the package directory; " +
				"check out the shared folder next to the repository (../shared from the repository root)")
		}
		dir = parent
	}
}

type schemaField struct{ name, typ string }

type schemaStruct struct {
	name   string
	fields []schemaField
}

var (
	structLine = regexp.MustCompile(`^struct\s+(\w+)\s*\{$`)
	fieldLine  = regexp.MustCompile(`^(\w+)\s*:\s*([^,]+?)\s*,?$`)
)

// parseSchema reads the structs of an SDP schema in order, ignoring comments.
func parseSchema(t *testing.T, src []byte) []schemaStruct {
	t.Helper()
	var structs []schemaStruct
	var open *schemaStruct
	for i, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		switch m := structLine.FindStringSubmatch(line); {
		case m != nil && open == nil:
			structs = append(structs, schemaStruct{name: m[1]})
			open = &structs[len(structs)-1]
		case line == "}" && open != nil:
			open = nil
		case open != nil && fieldLine.MatchString(line):
			f := fieldLine.FindStringSubmatch(line)
			open.fields = append(open.fields, schemaField{f[1], f[2]})
		default:
			t.Fatalf("schema line %d not understood: %q", i+1, line)
		}
	}
	if open != nil {
		t.Fatalf("schema ends inside struct %s", open.name)
	}
	return structs
}

func TestSchemaMatchesContract(t *testing.T) {
	contract, err := os.ReadFile(filepath.Join(sharedDir(t), "otlp_frames.sdp"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile("otlp_frames.sdp")
	if err != nil {
		t.Fatal(err)
	}
	want, got := parseSchema(t, contract), parseSchema(t, ours)
	if len(want) == 0 {
		t.Fatal("contract schema holds no structs")
	}
	if len(got) != len(want) {
		t.Fatalf("sdp/otlp_frames.sdp has %d structs, the contract %d", len(got), len(want))
	}
	for i := range want {
		if got[i].name != want[i].name {
			t.Errorf("struct %d (type ID %d) is %s, the contract says %s", i, i+1, got[i].name, want[i].name)
			continue
		}
		if len(got[i].fields) != len(want[i].fields) {
			t.Errorf("%s has %d fields, the contract %d", got[i].name, len(got[i].fields), len(want[i].fields))
			continue
		}
		for j := range want[i].fields {
			if got[i].fields[j] != want[i].fields[j] {
				t.Errorf("%s field %d is %v, the contract says %v", got[i].name, j, got[i].fields[j], want[i].fields[j])
			}
		}
	}
	// The type IDs are the schema positions.
	ids := map[string]uint16{"Hello": TypeHello, "ResourceFrame": TypeResourceFrame, "Ack": TypeAck}
	for i, s := range got {
		if id, ok := ids[s.name]; !ok || int(id) != i+1 {
			t.Errorf("struct %s at position %d: Go type ID %d", s.name, i+1, id)
		}
	}
}

// TestVectorCopiesMatchContract keeps testdata/vectors identical to the
// contract's golden files.
func TestVectorCopiesMatchContract(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "vectors")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadDir(filepath.Join("testdata", "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ours) != len(entries) {
		t.Errorf("testdata/vectors holds %d files, the contract %d", len(ours), len(entries))
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("testdata", "vectors", e.Name()))
		if err != nil {
			t.Errorf("copy of %s: %v", e.Name(), err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/vectors/%s differs from the contract", e.Name())
		}
	}
}
