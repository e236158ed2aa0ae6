package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"testing"
)

// TarEntry is one entry of a hand-made archive: a file with Body, or a
// symbolic link (Link set) or hard link (Link and Hard set).
type TarEntry struct {
	Name, Body, Link string
	Hard             bool
}

// TarGz writes entries in order, unchecked: tests build hostile archives
// (names with "../", links out) with it.
func TarGz(t testing.TB, entries ...TarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.Body))}
		switch {
		case e.Link != "" && e.Hard:
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, e.Link, 0
		case e.Link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.Link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.Link == "" {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
