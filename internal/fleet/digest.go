package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// inputDigest hashes what a build read: the content of files (paths
// relative to root), the spec and the variables.
func inputDigest(root string, files []string, spec any, vars map[string]string) string {
	h := sha256.New()
	sorted := append([]string(nil), files...)
	sort.Strings(sorted)
	for _, f := range sorted {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			data = []byte("\x00unreadable")
		}
		sum := sha256.Sum256(data)
		_, _ = h.Write([]byte(f + "\x00" + hex.EncodeToString(sum[:]) + "\n"))
	}
	meta, _ := json.Marshal(struct {
		Spec any
		Vars map[string]string // json sorts map keys
	}{spec, vars})
	_, _ = h.Write(meta)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// filesUnder lists the regular files under root/dir, relative to root with
// forward slashes; nil when dir does not exist.
func filesUnder(root, dir string) []string {
	var out []string
	base := filepath.Join(root, filepath.FromSlash(dir))
	_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // a missing path is an empty input
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if rel, err := filepath.Rel(root, p); err == nil {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	return out
}
