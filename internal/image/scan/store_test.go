package scan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRevisionIsFluxs(t *testing.T) {
	// sha256 of "b\na\n": Flux 2.9's revision of the same list.
	if got, want := Revision([]string{"b", "a"}), "sha256:aea8a04c2f293417e499bf5de2def8ebb1ed40264d128a67180ea56fbe4600ff"; got != want {
		t.Errorf("Revision = %s, want %s", got, want)
	}
	if Revision([]string{"b", "a"}) == Revision([]string{"a", "b"}) {
		t.Error("the revision depends on the order")
	}
}

func TestStore(t *testing.T) {
	s := &Store{Dir: t.TempDir(), CompressAbove: 64}
	small := []string{"v2", "v1"}
	rev1, size, err := s.Put("ns", "app", small)
	if err != nil || rev1 != Revision(small) || size != int64(len("v2\nv1\n")) {
		t.Fatalf("Put: %s %d %v", rev1, size, err)
	}
	got, err := s.Get("ns", "app", rev1)
	if err != nil || !slices.Equal(got, small) {
		t.Fatalf("Get: %v %v", got, err)
	}

	var big []string
	for i := range 100 {
		big = append(big, fmt.Sprintf("1.0.%d", i))
	}
	rev2, size, err := s.Put("ns", "app", big)
	if err != nil || size >= int64(len(serialize(big))) {
		t.Fatalf("Put big: %d bytes, %v; want compressed below %d", size, err, len(serialize(big)))
	}
	if got, err := s.Get("ns", "app", rev2); err != nil || !slices.Equal(got, big) {
		t.Fatalf("Get big: %d tags, %v", len(got), err)
	}
	if _, err := s.Get("ns", "app", rev1); !errors.Is(err, ErrNoTags) {
		t.Errorf("the old revision is gone: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(s.Dir, "imagerepository", "ns", "app"))
	if len(entries) != 1 {
		t.Errorf("one file per repository, found %d", len(entries))
	}

	// A new Store on the same directory (a restarted controller) reads it.
	again := &Store{Dir: s.Dir}
	if got, err := again.Get("ns", "app", rev2); err != nil || len(got) != 100 {
		t.Errorf("after restart: %d tags, %v", len(got), err)
	}
	if _, err := s.Get("ns", "app", "sha256:../../x"); !errors.Is(err, ErrNoTags) {
		t.Errorf("a path in the revision: %v", err)
	}
	if err := s.Delete("ns", "app"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("ns", "app", rev2); !errors.Is(err, ErrNoTags) {
		t.Errorf("after Delete: %v", err)
	}
}
