package artifact

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/api/meta"
)

func TestGarbageCollect(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const objDir = "gitrepository/default/app"
	type f struct {
		name string
		age  time.Duration
	}
	tests := []struct {
		name    string
		files   []f // "cur.tar.gz" is the current artifact
		records int
		ttl     time.Duration
		want    []string // deleted, relative to dir
	}{
		{
			name:    "keeps records files, current included",
			files:   []f{{"cur.tar.gz", 0}, {"a.tar.gz", 10 * time.Second}, {"b.tar.gz", 20 * time.Second}, {"c.tar.gz", 30 * time.Second}},
			records: 2, ttl: time.Minute,
			want: []string{"b.tar.gz", "c.tar.gz"},
		},
		{
			name:    "expired files go even when within records",
			files:   []f{{"cur.tar.gz", 0}, {"a.tar.gz", 2 * time.Minute}},
			records: 2, ttl: time.Minute,
			want: []string{"a.tar.gz"},
		},
		{
			name:    "nothing expires before ttl",
			files:   []f{{"cur.tar.gz", 0}, {"a.tar.gz", time.Minute}},
			records: 2, ttl: time.Minute,
		},
		{
			name:    "the current file stays however old",
			files:   []f{{"cur.tar.gz", 24 * time.Hour}, {"a.tar.gz", time.Hour}},
			records: 5, ttl: time.Minute,
			want: []string{"a.tar.gz"},
		},
		{
			name:    "records 1 keeps only the current file",
			files:   []f{{"cur.tar.gz", 0}, {"a.tar.gz", time.Second}, {"b.tar.gz", 2 * time.Second}},
			records: 1, ttl: time.Hour,
			want: []string{"a.tar.gz", "b.tar.gz"},
		},
		{
			name:    "records 0 is records 1",
			files:   []f{{"cur.tar.gz", 0}, {"a.tar.gz", time.Second}},
			records: 0, ttl: time.Hour,
			want: []string{"a.tar.gz"},
		},
		{
			name:    "newest kept, ties broken by name",
			files:   []f{{"cur.tar.gz", 0}, {"z.tar.gz", 5 * time.Second}, {"y.tar.gz", 5 * time.Second}, {"x.tar.gz", time.Second}},
			records: 3, ttl: time.Hour,
			want: []string{"z.tar.gz"},
		},
		{
			name:    "stale temporary files go, fresh ones stay",
			files:   []f{{"cur.tar.gz", 0}, {".cur.tar.gz.tmp-old", 2 * time.Minute}, {".cur.tar.gz.tmp-new", time.Second}},
			records: 2, ttl: time.Minute,
			want: []string{".cur.tar.gz.tmp-old"},
		},
		{
			name:    "current file missing",
			files:   []f{{"a.tar.gz", time.Second}, {"b.tar.gz", 2 * time.Second}},
			records: 2, ttl: time.Hour,
			want: []string{"b.tar.gz"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: now}
			s, root := newTestStorage(t, Options{Now: clock.Now})
			for _, tf := range tt.files {
				p := filepath.Join(root, filepath.FromSlash(objDir), tf.name)
				writeTree(t, filepath.Dir(p), node{Path: tf.name, Content: tf.name})
				mt := now.Add(-tf.age)
				if err := os.Chtimes(p, mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			// A directory and a link in the object directory are left alone.
			writeTree(t, filepath.Join(root, filepath.FromSlash(objDir)), dir("subdir"), symlink("latest.tar.gz", "cur.tar.gz"))

			deleted, err := s.GarbageCollect(context.Background(), meta.Artifact{Path: objDir + "/cur.tar.gz"}, tt.records, tt.ttl)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, objDir+"/"+w)
			}
			if diff := cmp.Diff(want, deleted); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			for _, tf := range tt.files {
				_, err := os.Stat(filepath.Join(root, filepath.FromSlash(objDir), tf.name))
				gone := os.IsNotExist(err)
				if gone != slices.Contains(tt.want, tf.name) {
					t.Errorf("%s: gone = %v", tf.name, gone)
				}
			}
		})
	}
}

func TestGarbageCollectAfterArchives(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s, _ := newTestStorage(t, Options{Now: clock.Now})
	src := t.TempDir()
	var all []meta.Artifact
	for _, rev := range []string{"r1", "r2", "r3", "r4"} {
		writeTree(t, src, file("rev", rev))
		a := s.NewArtifactFor("GitRepository", object("default", "app"), rev, rev+".tar.gz")
		if _, err := s.Archive(context.Background(), &a, src, nil); err != nil {
			t.Fatal(err)
		}
		all = append(all, a)
		clock.now = clock.now.Add(5 * time.Second)
	}
	deleted, err := s.GarbageCollect(context.Background(), all[3], 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{all[0].Path, all[1].Path}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	clock.now = clock.now.Add(2 * time.Minute)
	deleted, err = s.GarbageCollect(context.Background(), all[3], 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{all[2].Path}, deleted); diff != "" {
		t.Errorf("after ttl, deleted (-want +got):\n%s", diff)
	}
	if !s.Exists(all[3]) {
		t.Error("current artifact deleted")
	}
	if deleted, err := s.GarbageCollect(context.Background(), s.NewArtifactFor("GitRepository", object("default", "gone"), "r", "r.tar.gz"), 2, 0); err != nil || deleted != nil {
		t.Errorf("missing object directory: %v, %v", deleted, err)
	}
}
