package artifact

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
)

// FuzzUntar feeds arbitrary bytes to Untar and checks its promises hold
// whether it succeeds or not: nothing beside the destination changes, no
// link left behind resolves outside it, and files stay within the bound.
// ReadTree, unless it leaves the input to disk, must fail as Untar does, in
// the same words, or hold the files Untar wrote.
func FuzzUntar(f *testing.F) {
	for _, tc := range untarCases {
		f.Add(makeTar(f, false, tc.members...))
		f.Add(makeTar(f, true, tc.members...))
	}
	src := f.TempDir()
	writeTree(f, src, file("a/b.yaml", "b"), exe("run.sh", "#!/bin/sh"), dir("empty"))
	var buf bytes.Buffer
	if _, err := WriteArchive(context.Background(), &buf, src, ArchiveOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())

	// One sandbox per worker, emptied before each input: t.TempDir per
	// input would triple the cost of an execution.
	base, dest := untarSandbox(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.RemoveAll(dest); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		diskErr := Untar(bytes.NewReader(data), dest, untarTestMax)
		checkContained(t, base, dest, untarTestMax)
		tree, err := ReadTree(bytes.NewReader(data), untarTestMax, 0)
		switch {
		case errors.Is(err, ErrNeedsDisk):
		case err != nil || diskErr != nil:
			if err == nil || diskErr == nil || err.Error() != diskErr.Error() {
				t.Fatalf("ReadTree: %v\nUntar:    %v", err, diskErr)
			}
		case !maps.Equal(readTree(t, dest), memContents(t, tree)):
			t.Fatalf("ReadTree holds %v, Untar wrote %v", memContents(t, tree), readTree(t, dest))
		}
	})
}

// FuzzIgnoreRules matches arbitrary paths against arbitrary rules, as
// .sourceignore files and spec.ignore are written by users.
func FuzzIgnoreRules(f *testing.F) {
	f.Add("*.md\n!README.md\n/deploy/**/*.txt\n", "deploy/a/b.txt", false)
	f.Add("[\n\\!x\n**/**\n/\n!\n", "a/[/b", true)
	f.Add("# c\r\n a \r\n\\#x", "#x", false)
	f.Fuzz(func(_ *testing.T, rules, p string, isDir bool) {
		fl := NewFilterFromRules(IgnoreRules{Dir: "sub", Text: rules}, IgnoreRules{Text: rules})
		fl.Exclude(p, isDir)
		fl.Exclude("sub/"+p, isDir)
	})
}

// FuzzServerPath sends arbitrary paths to the file server, which must
// never answer with anything but the one stored artifact.
func FuzzServerPath(f *testing.F) {
	for _, p := range []string{
		"/gitrepository/default/podinfo/abc.tar.gz", "/../secret.txt", "/gitrepository/default/podinfo/escape.tar.gz",
		"/linkedkind/default/x/y.tar.gz", "/gitrepository/default/podinfo/.abc.tar.gz.tmp-123", "/%2e%2e/secret.txt",
	} {
		f.Add(p)
	}
	s, content := newServedStorage(f)
	h := NewServer(s).Handler()
	f.Fuzz(func(t *testing.T, p string) {
		rec := httptest.NewRecorder()
		req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: p}, Header: http.Header{}, Body: http.NoBody}
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		if strings.Contains(string(body), secretOutside) {
			t.Fatalf("%q served a file from outside the storage", p)
		}
		if rec.Code == http.StatusOK && !bytes.Equal(body, content) {
			t.Fatalf("%q served %d unexpected bytes", p, len(body))
		}
		if rec.Code == http.StatusOK && p != "/gitrepository/default/podinfo/abc.tar.gz" {
			t.Fatalf("%q served the artifact under another name", p)
		}
	})
}
