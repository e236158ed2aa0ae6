package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// member is one tar entry for a hand-made archive.
type member struct {
	Name, Body, Link string
	Type             byte
	Mode             int64
	Size             int64 // overrides len(Body) when set
}

func reg(name, body string) member { return member{Name: name, Body: body, Type: tar.TypeReg} }
func dirm(name string) member      { return member{Name: name, Type: tar.TypeDir} }
func slink(name, target string) member {
	return member{Name: name, Link: target, Type: tar.TypeSymlink}
}
func hlink(name, target string) member   { return member{Name: name, Link: target, Type: tar.TypeLink} }
func special(name string, t byte) member { return member{Name: name, Type: t} }

func makeTar(t testing.TB, compress bool, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	var gz *gzip.Writer
	var tw *tar.Writer
	if compress {
		gz = gzip.NewWriter(&buf)
		tw = tar.NewWriter(gz)
	} else {
		tw = tar.NewWriter(&buf)
	}
	for _, m := range members {
		mode := m.Mode
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: m.Name, Typeflag: m.Type, Linkname: m.Link, Mode: mode, Format: tar.FormatPAX}
		if m.Type == tar.TypeXGlobalHeader {
			hdr = &tar.Header{Typeflag: m.Type, PAXRecords: map[string]string{"comment": m.Name}}
		}
		if m.Type == tar.TypeReg {
			hdr.Size = int64(len(m.Body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if m.Body != "" {
			if _, err := tw.Write([]byte(m.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// untarCases are shared with the fuzz target as seeds.
var untarCases = []struct {
	name    string
	members []member
	prepare []node // created in the destination first
	wantErr error
	want    map[string]string // regular files after success; "-> x" for links
}{
	{
		name:    "plain tree",
		members: []member{dirm("a/"), reg("a/b.yaml", "b"), {Name: "a/run.sh", Body: "sh", Type: tar.TypeReg, Mode: 0o4777}, reg("deep/er/c", "c")},
		want:    map[string]string{"a/b.yaml": "b", "a/run.sh": "sh", "deep/er/c": "c"},
	},
	{
		name:    "dot prefixes and the root entry",
		members: []member{dirm("./"), reg("./a", "a"), reg("x/../b", "b")},
		want:    map[string]string{"a": "a", "b": "b"},
	},
	{
		name:    "global header skipped",
		members: []member{{Name: "pax_global_header", Type: tar.TypeXGlobalHeader}, reg("a", "a")},
		want:    map[string]string{"a": "a"},
	},
	{name: "absolute path", members: []member{reg("/etc/cron.d/evil", "x")}, wantErr: ErrUnsafeEntry},
	{name: "dot-dot", members: []member{reg("../evil", "x")}, wantErr: ErrUnsafeEntry},
	{name: "nested dot-dot", members: []member{reg("a/../../evil", "x")}, wantErr: ErrUnsafeEntry},
	{name: "backslash", members: []member{reg(`..\evil`, "x")}, wantErr: ErrUnsafeEntry},
	{name: "absolute symlink", members: []member{slink("l", "/etc/passwd")}, wantErr: ErrUnsafeEntry},
	{name: "symlink out", members: []member{slink("l", "../outside/secret")}, wantErr: ErrUnsafeEntry},
	{name: "nested symlink out", members: []member{dirm("a/"), slink("a/l", "../../outside")}, wantErr: ErrUnsafeEntry},
	{
		name:    "symlink inside",
		members: []member{reg("target", "t"), slink("sub/l", "../target")},
		want:    map[string]string{"target": "t", "sub/l": "-> ../target"},
	},
	{
		name:    "write through a symlink",
		members: []member{dirm("real/"), slink("l", "real"), reg("l/x", "x")},
		wantErr: ErrUnsafeEntry,
	},
	{
		name:    "symlink chain through a link to the root",
		members: []member{slink("s", "."), slink("s/s/s/l", "../../../outside/secret")},
		wantErr: ErrUnsafeEntry,
	},
	{
		name:    "symlink whose detour only the file system sees",
		members: []member{slink("s", "."), dirm("d/"), slink("d/l", "../s/../outside/secret")},
		wantErr: ErrUnsafeEntry,
	},
	{
		name:    "symlink later made to escape by another link",
		members: []member{reg("t", "t"), slink("l", "x/../t"), slink("x", ".")},
		wantErr: ErrUnsafeEntry,
	},
	{name: "dangling symlink", members: []member{slink("l", "nowhere")}, wantErr: ErrUnsafeEntry},
	{name: "hard link out", members: []member{hlink("h", "../outside/secret")}, wantErr: ErrUnsafeEntry},
	{name: "absolute hard link", members: []member{hlink("h", "/etc/passwd")}, wantErr: ErrUnsafeEntry},
	{name: "hard link to nothing extracted", members: []member{hlink("h", "later"), reg("later", "x")}, wantErr: ErrUnsafeEntry},
	{
		name:    "hard link to a symlink",
		members: []member{reg("t", "t"), slink("l", "t"), hlink("h", "l")},
		wantErr: ErrUnsafeEntry,
	},
	{
		name:    "hard link inside",
		members: []member{reg("a/t", "t"), hlink("b/h", "a/t")},
		want:    map[string]string{"a/t": "t", "b/h": "t"},
	},
	{name: "character device", members: []member{special("dev", tar.TypeChar)}, wantErr: ErrUnsafeEntry},
	{name: "block device", members: []member{special("dev", tar.TypeBlock)}, wantErr: ErrUnsafeEntry},
	{name: "fifo", members: []member{special("fifo", tar.TypeFifo)}, wantErr: ErrUnsafeEntry},
	{name: "file over directory", members: []member{dirm("a/"), reg("a", "x")}, wantErr: ErrUnsafeEntry},
	{name: "directory under file", members: []member{reg("a", "x"), reg("a/b", "y")}, wantErr: ErrUnsafeEntry},
	{
		name:    "later duplicate wins",
		members: []member{reg("a", "first"), reg("a", "second")},
		want:    map[string]string{"a": "second"},
	},
	{
		name:    "file replaces a symlink without writing through it",
		members: []member{reg("t", "t"), slink("l", "t"), reg("l", "new")},
		want:    map[string]string{"t": "t", "l": "new"},
	},
	{
		name:    "planted link in the destination",
		prepare: []node{symlink("pre", "../outside")},
		members: []member{reg("pre/secret", "overwritten")},
		wantErr: ErrUnsafeEntry,
	},
	{
		name:    "planted link replaced, not followed",
		prepare: []node{symlink("pre", "../outside/secret")},
		members: []member{reg("pre", "mine")},
		want:    map[string]string{"pre": "mine"},
	},
	{name: "file over the limit", members: []member{reg("big", strings.Repeat("x", 10000))}, wantErr: ErrArchiveTooLarge},
	{
		name:    "files over the limit together",
		members: []member{reg("a", strings.Repeat("x", 3000)), reg("b", strings.Repeat("x", 3000)), reg("c", strings.Repeat("x", 3000))},
		wantErr: ErrArchiveTooLarge,
	},
	{name: "headers over the limit", members: manyDirs(20), wantErr: ErrArchiveTooLarge},
	{name: "name longer than PATH_MAX", members: []member{reg(strings.Repeat("n/", 2100)+"f", "x")}, wantErr: ErrUnsafeEntry},
	{
		name:    "deep tree",
		members: []member{reg(strings.Repeat("d/", 300)+"f", "deep"), reg(strings.Repeat("d/", 150)+"g", "mid")},
		want:    map[string]string{strings.Repeat("d/", 300) + "f": "deep", strings.Repeat("d/", 150) + "g": "mid"},
	},
}

func manyDirs(n int) []member {
	var ms []member
	for i := range n {
		ms = append(ms, dirm(strings.Repeat("d", i+1)+"/"))
	}
	return ms
}

const untarTestMax = 8192

func TestUntar(t *testing.T) {
	for _, tt := range untarCases {
		for _, compress := range []bool{false, true} {
			name := tt.name
			if compress {
				name += " gzip"
			}
			t.Run(name, func(t *testing.T) {
				base, dest := untarSandbox(t)
				writeTree(t, dest, tt.prepare...)
				err := Untar(bytes.NewReader(makeTar(t, compress, tt.members...)), dest, untarTestMax)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("err = %v, want %v", err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatalf("Untar: %v", err)
				}
				for _, n := range tt.prepare {
					p := filepath.Join(dest, n.Path)
					if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
						os.Remove(p) // the test's own plant, not Untar's doing
					}
				}
				checkContained(t, base, dest, untarTestMax)
				if tt.want != nil {
					if diff := cmp.Diff(tt.want, readTree(t, dest)); diff != "" {
						t.Errorf("tree (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}

func TestUntarModes(t *testing.T) {
	_, dest := untarSandbox(t)
	data := makeTar(t, true, member{Name: "x", Body: "x", Type: tar.TypeReg, Mode: 0o6777}, member{Name: "r", Body: "r", Type: tar.TypeReg, Mode: 0o600})
	if err := Untar(bytes.NewReader(data), dest, 0); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"x": 0o755, "r": 0o644} {
		fi, err := os.Stat(filepath.Join(dest, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() &^ 0o022; got != want&^0o022 {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
		}
	}
}

func TestUntarGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	const size = 64 << 20
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range size / len(zeros) {
		if _, err := tw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes compressed", buf.Len())
	}
	base, dest := untarSandbox(t)
	if err := Untar(&buf, dest, 1<<20); !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("err = %v, want ErrArchiveTooLarge", err)
	}
	checkContained(t, base, dest, 1<<20)
}

func TestUntarRoundTrip(t *testing.T) {
	src := t.TempDir()
	tree := []node{
		file("deploy/app.yaml", "kind: Deployment\n"),
		exe("bin/run.sh", "#!/bin/sh\n"),
		dir("empty"),
		file(strings.Repeat("d/", 80)+"deep.yaml", "deep: true\n"),
	}
	writeTree(t, src, tree...)
	var buf bytes.Buffer
	if _, err := WriteArchive(context.Background(), &buf, src, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "out")
	if err := Untar(&buf, dest, -1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(readTree(t, src), readTree(t, dest)); diff != "" {
		t.Errorf("round trip (-src +dest):\n%s", diff)
	}
	if fi, err := os.Stat(filepath.Join(dest, "empty")); err != nil || !fi.IsDir() {
		t.Errorf("empty directory lost: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dest, "bin", "run.sh")); fi.Mode()&0o100 == 0 {
		t.Error("executable bit lost")
	}
}

// untarSandbox returns base holding outside/secret and an empty dest.
func untarSandbox(t testing.TB) (string, string) {
	t.Helper()
	base := t.TempDir()
	writeTree(t, base, file("outside/secret", secretOutside), dir("dest"))
	return base, filepath.Join(base, "dest")
}

// checkContained asserts what Untar promises whatever it returned: nothing
// written beside dest, no link in dest resolving outside it, and no more
// than limit bytes of files.
func checkContained(t testing.TB, base, dest string, limit int64) {
	t.Helper()
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("Untar wrote beside its destination: %v", entries)
	}
	if b, err := os.ReadFile(filepath.Join(base, "outside", "secret")); err != nil || string(b) != secretOutside {
		t.Fatalf("file outside the destination changed: %q %v", b, err)
	}
	if others, _ := os.ReadDir(filepath.Join(base, "outside")); len(others) != 1 {
		t.Fatalf("Untar wrote into outside/: %v", others)
	}
	realDest, err := filepath.EvalSymlinks(dest)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(p)
			if err != nil {
				t.Errorf("link %s left dangling or looping: %v", p, err)
				return nil
			}
			if resolved != realDest && !strings.HasPrefix(resolved, realDest+string(filepath.Separator)) {
				t.Errorf("link %s resolves outside the destination to %s", p, resolved)
			}
			return nil
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if limit >= 0 && total > limit {
		t.Errorf("extracted %d bytes, bound %d", total, limit)
	}
}

// readTree maps regular files to their content and links to "-> target".
func readTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
