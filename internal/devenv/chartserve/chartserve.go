package chartserve

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// IndexFile is the name of a chart repository's index.
const IndexFile = "index.yaml"

// Server is a chart repository: a directory of chart archives and its
// index, served over HTTP on 127.0.0.1.
type Server struct {
	root string
	url  string
	http *http.Server
	done chan struct{}
	mu   sync.Mutex // serialises packaging and indexing
}

// Start serves root (created if missing) on a free port of 127.0.0.1, with
// an index of whatever archives root already holds, until Close.
func Start(root string) (*Server, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("creating the chart repository directory: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the chart repository: %w", err)
	}
	s := &Server{
		root: root,
		url:  "http://" + l.Addr().String(),
		http: &http.Server{
			Handler:           http.FileServer(http.Dir(root)),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          log.New(io.Discard, "", 0),
		},
		done: make(chan struct{}),
	}
	if err := s.reindex(); err != nil {
		_ = l.Close()
		return nil, err
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(l)
	}()
	return s, nil
}

// URL is the repository URL, http://127.0.0.1:PORT, as a HelmRepository's
// spec.url takes it.
func (s *Server) URL() string { return s.url }

// Package loads the chart directory dir as `helm package` does, writes its
// archive (<name>-<version>.tgz) into the repository, re-indexes it and
// returns the archive's file name. Packaging a version that is there
// replaces it.
func (s *Server) Package(dir string) (string, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return "", fmt.Errorf("loading chart %s: %w", dir, err)
	}
	if err := ch.Validate(); err != nil {
		return "", fmt.Errorf("chart %s: %w", dir, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path, err := chartutil.Save(ch, s.root)
	if err != nil {
		return "", fmt.Errorf("packaging chart %s: %w", dir, err)
	}
	if err := s.reindexLocked(); err != nil {
		return "", err
	}
	return filepath.Base(path), nil
}

func (s *Server) reindex() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reindexLocked()
}

// reindexLocked rewrites index.yaml from the archives on disk, entries
// sorted as `helm repo index` sorts them.
func (s *Server) reindexLocked() error {
	index, err := repo.IndexDirectory(s.root, s.url)
	if err != nil {
		return fmt.Errorf("indexing %s: %w", s.root, err)
	}
	index.SortEntries()
	if err := index.WriteFile(filepath.Join(s.root, IndexFile), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", IndexFile, err)
	}
	return nil
}

// Close stops listening, ends open connections and waits for the server.
func (s *Server) Close() error {
	err := s.http.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
