package artifact

import (
	"net/http"
	"os"
	"path"
	"strings"
)

// Server serves stored artifacts over HTTP (--storage-addr).
type Server struct {
	storage *Storage
}

// NewServer returns a server for the files of s.
func NewServer(s *Storage) *Server { return &Server{storage: s} }

// Handler answers GET and HEAD for /<kind>/<namespace>/<name>/<file> with
// the stored regular file, honouring Range and conditional requests. Every
// other path is 404 — directories (there are no listings), anything not
// clean, dot-segments in any encoding, temporary files, and links — and
// files are opened through the storage's os.Root, so nothing outside the
// storage root is ever served.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serve)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	// URL.Path is already percent-decoded, so %2e%2e and %2f arrive here
	// as ".." and "/" and meet the same checks.
	rel, ok := strings.CutPrefix(r.URL.Path, "/")
	if !ok || path.Clean("/"+rel) != "/"+rel || artifactRelError(rel) {
		http.NotFound(w, r)
		return
	}
	root := s.storage.root
	lfi, err := root.Lstat(rel)
	if err != nil || !lfi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	f, err := openRegular(root, rel)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !os.SameFile(lfi, fi) {
		// Replaced between the checks: answer as if it were not there.
		http.NotFound(w, r)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", contentType(rel))
	}
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

func artifactRelError(rel string) bool {
	_, err := artifactRel(rel)
	return err != nil
}

// contentType names what artifacts usually are; ServeContent would
// otherwise sniff the bytes.
func contentType(rel string) string {
	switch {
	case strings.HasSuffix(rel, ".tar.gz"), strings.HasSuffix(rel, ".tgz"):
		return "application/gzip"
	case strings.HasSuffix(rel, ".yaml"), strings.HasSuffix(rel, ".yml"):
		return "application/yaml"
	case strings.HasSuffix(rel, ".json"):
		return "application/json"
	default:
		return "application/octet-stream"
	}
}
