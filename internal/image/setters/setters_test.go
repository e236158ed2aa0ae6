package setters

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// mapFS is an FS in memory that records what was written.
type mapFS struct {
	files   map[string][]byte
	written map[string]bool
}

func loadFS(t *testing.T, root string) *mapFS {
	t.Helper()
	m := &mapFS{files: map[string][]byte{}, written: map[string]bool{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		m.files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *mapFS) Files(dir string) ([]string, error) {
	var out []string
	for p := range m.files {
		if dir == "." || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (m *mapFS) ReadFile(p string) ([]byte, error) {
	data, ok := m.files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return data, nil
}

func (m *mapFS) WriteFile(p string, data []byte) error {
	m.files[p] = data
	m.written[p] = true
	return nil
}

func policy(ns, name, image, tag, digest string) imagev1.ImagePolicy {
	p := imagev1.ImagePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if image != "" {
		p.Status.LatestRef = &imagev1.ImageRef{Name: image, Tag: tag, Digest: digest}
	}
	return p
}

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func testPolicies() []imagev1.ImagePolicy {
	return []imagev1.ImagePolicy{
		policy("apps", "app", "ghcr.io/org/app", "2.0.0", ""),
		policy("apps", "chart", "ghcr.io/org/chart", "1.10", digestA),
		policy("apps", "pinned", "ghcr.io/org/pinned", "1.1", digestA),
		policy("apps", "waiting", "", "", ""),    // no latest image yet
		policy("other", "sidecar", "x", "1", ""), // same name, other namespace
	}
}

// TestUpdateGolden runs the setters over testdata/update/input with update
// path deploy and compares every rewritten file, and the list of changes,
// with testdata/update/expected.
func TestUpdateGolden(t *testing.T) {
	fsys := loadFS(t, "testdata/update/input")
	original := maps.Clone(fsys.files)
	result, err := Update(fsys, "deploy", ValuesFor(testPolicies()))
	if err != nil {
		t.Fatal(err)
	}
	wantWritten := []string{"deploy/app.yaml", "deploy/helm.yaml", "deploy/multi.yaml", "deploy/sub/Kustomization", "deploy/sub/values.yml"}
	if got := slices.Sorted(maps.Keys(fsys.written)); !slices.Equal(got, wantWritten) {
		t.Errorf("written %q, want %q", got, wantWritten)
	}
	for p := range fsys.written {
		golden.Assert(t, path.Join("testdata/update/expected", p), fsys.files[p])
	}
	for p, data := range original {
		if !fsys.written[p] && string(fsys.files[p]) != string(data) {
			t.Errorf("%s changed without being written", p)
		}
	}
	golden.Assert(t, "testdata/update/changes.txt", []byte(describe(result)))

	// A second run over its own output changes nothing.
	again, err := Update(fsys, "deploy", ValuesFor(testPolicies()))
	if err != nil || !again.Empty() {
		t.Errorf("second run: %v, %s", err, describe(again))
	}
}

// describe lists a result one change per line, file by file.
func describe(r Result) string {
	var b strings.Builder
	for _, file := range slices.Sorted(maps.Keys(r.FileChanges)) {
		objects := r.FileChanges[file]
		for _, id := range slices.SortedFunc(maps.Keys(objects), compareIDs) {
			for _, c := range objects[id] {
				fmt.Fprintf(&b, "%s %s/%s %s/%s: %s: %q -> %q\n", file, id.APIVersion, id.Kind, id.Namespace, id.Name, c.Setter, c.OldValue, c.NewValue)
			}
		}
	}
	return b.String()
}

func TestValuesFor(t *testing.T) {
	got := ValuesFor(testPolicies())
	want := Values{
		"apps:app": "ghcr.io/org/app:2.0.0", "apps:app:name": "ghcr.io/org/app", "apps:app:tag": "2.0.0",
		"apps:chart": "ghcr.io/org/chart:1.10@" + digestA, "apps:chart:name": "ghcr.io/org/chart",
		"apps:chart:tag": "1.10", "apps:chart:digest": digestA,
		"apps:pinned": "ghcr.io/org/pinned:1.1@" + digestA, "apps:pinned:name": "ghcr.io/org/pinned",
		"apps:pinned:tag": "1.1", "apps:pinned:digest": digestA,
		"other:sidecar": "x:1", "other:sidecar:name": "x", "other:sidecar:tag": "1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ValuesFor (-want +got):\n%s", diff)
	}
}

func TestUpdateFile(t *testing.T) {
	values := Values{"ns:p": "img:2", "ns:p:tag": "true"}
	tests := []struct {
		name, in, want string
		changes        int
	}{
		{name: "line comment", in: "image: img:1 # {\"$imagepolicy\": \"ns:p\"}\n", want: "image: img:2 # {\"$imagepolicy\": \"ns:p\"}\n", changes: 1},
		{name: "no space after hash", in: "image: img:1 #{\"$imagepolicy\":\"ns:p\"}\n", want: "image: img:2 #{\"$imagepolicy\":\"ns:p\"}\n", changes: 1},
		{name: "keeps a string a string", in: "tag: v1 # {\"$imagepolicy\": \"ns:p:tag\"}\n", want: "tag: \"true\" # {\"$imagepolicy\": \"ns:p:tag\"}\n", changes: 1},
		{name: "sequence item", in: "images:\n- img:1 # {\"$imagepolicy\": \"ns:p\"}\n", want: "images:\n- img:2 # {\"$imagepolicy\": \"ns:p\"}\n", changes: 1},
		{name: "other keys in the marker", in: "image: img:1 # {\"$imagepolicy\": \"ns:p\", \"x\": \"y\"}\n", want: "image: img:2 # {\"$imagepolicy\": \"ns:p\", \"x\": \"y\"}\n", changes: 1},
		{name: "unknown setter", in: "image: img:1 # {\"$imagepolicy\": \"ns:q\"}\n"},
		{name: "non-string marker value", in: "image: img:1 # {\"$imagepolicy\": 3}\n"},
		{name: "map value is not a scalar", in: "image: # {\"$imagepolicy\": \"ns:p\"}\n  a: b\n"},
		{name: "line comment hides head comment", in: "# {\"$imagepolicy\": \"ns:p\"}\nimage: img:1 # other\n"},
		{name: "no token", in: "image: img:1 # {$imagepolicy: ns:p}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changes, err := UpdateFile([]byte(tt.in), values)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, c := range changes {
				n += len(c)
			}
			if n != tt.changes {
				t.Errorf("%d changes, want %d", n, tt.changes)
			}
			if tt.changes > 0 && string(out) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
			if tt.changes == 0 && out != nil {
				t.Errorf("output %q for no change", out)
			}
		})
	}
}

func TestUpdateFileInvalidYAML(t *testing.T) {
	if _, _, err := UpdateFile([]byte("a: [\n# {\"$imagepolicy\": \"ns:p\"}\n"), Values{"ns:p": "x"}); err == nil {
		t.Error("want a parse error")
	}
}

func TestResultHelpers(t *testing.T) {
	dep := ObjectIdentifier{Kind: "Deployment", Name: "a"}
	cron := ObjectIdentifier{Kind: "CronJob", Name: "b"}
	r := Result{FileChanges: map[string]ObjectChanges{
		"b.yaml": {dep: {{OldValue: "3", NewValue: "4"}}},
		"a.yaml": {dep: {{OldValue: "1", NewValue: "2"}}, cron: {{OldValue: "x", NewValue: "y"}}},
	}}
	var got []string
	for _, c := range r.Changes() {
		got = append(got, c.OldValue+"->"+c.NewValue)
	}
	if want := []string{"x->y", "1->2", "3->4"}; !slices.Equal(got, want) {
		t.Errorf("Changes = %q, want %q", got, want)
	}
	objects := r.Objects()
	if len(objects) != 2 || len(objects[dep]) != 2 || objects[dep][0].NewValue != "2" {
		t.Errorf("Objects = %v", objects)
	}
	if r.Empty() || !(Result{}).Empty() {
		t.Error("Empty is wrong")
	}
}
