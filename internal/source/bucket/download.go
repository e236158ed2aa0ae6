package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// DownloadOptions bound a Download. The zero value uses the defaults.
type DownloadOptions struct {
	// MaxSize bounds the bytes written in total; 0 means
	// DefaultMaxDownloadSize, negative means unbounded.
	MaxSize int64
	// Concurrency is how many objects are fetched at once; 0 or less
	// means DefaultConcurrency.
	Concurrency int
}

// Download writes every object of ix to dir/<key>, and returns the index
// as downloaded: an object whose ETag changed since the listing carries the
// new one, and an object that disappeared meanwhile is left out, as Flux
// does. dir must exist; it should be empty.
//
// Every key is checked again (CheckKey) and every file is created through
// an os.Root on dir with O_EXCL, so no key, link or race writes outside dir
// or over another object's file. The listed sizes are checked against
// MaxSize before the first request, and the bytes actually received while
// they stream in.
func (c *Client) Download(ctx context.Context, bucketName string, ix Index, dir string, opts DownloadOptions) (Index, error) {
	limit := opts.MaxSize
	if limit == 0 {
		limit = DefaultMaxDownloadSize
	}
	if size := ix.Size(); limit > 0 && size > limit {
		return nil, fmt.Errorf("%w: objects of bucket '%s' add up to %d bytes, more than the limit of %d", ErrTooLarge, bucketName, size, limit)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening download directory: %w", err)
	}
	defer root.Close()

	keys := ix.Keys()
	if err := makeParents(root, bucketName, keys); err != nil {
		return nil, err
	}
	d := &downloader{client: c, bucket: bucketName, root: root, limit: limit, got: make(Index, len(ix))}
	g, gctx := errgroup.WithContext(ctx)
	conc := opts.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	g.SetLimit(conc)
	for _, k := range keys {
		obj := ix[k]
		g.Go(func() error { return d.fetch(gctx, obj) })
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("fetch from bucket '%s' failed: %w", bucketName, err)
	}
	return d.got, nil
}

// makeParents creates the directories the keys need, before any download,
// so the concurrent writers never race on them.
func makeParents(root *os.Root, bucketName string, keys []string) error {
	made := map[string]bool{}
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return fmt.Errorf("refusing object '%s' of bucket '%s': %w", k, bucketName, err)
		}
		dir := path.Dir(k)
		if dir == "." || made[dir] {
			continue
		}
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("failed to create directory for object '%s': %w", k, err)
		}
		made[dir] = true
	}
	return nil
}

type downloader struct {
	client  *Client
	bucket  string
	root    *os.Root
	limit   int64
	written atomic.Int64

	mu  sync.Mutex
	got Index
}

func (d *downloader) fetch(ctx context.Context, obj Object) error {
	o, info, err := d.client.store.GetObject(ctx, d.bucket, obj.Key)
	if errors.Is(err, ErrObjectNotFound) {
		return nil // disappeared since the listing: left out, as in Flux
	}
	if err != nil {
		return fmt.Errorf("failed to get '%s' object: %w", obj.Key, err)
	}
	defer o.Close()
	if err := d.write(obj.Key, o); err != nil {
		return err
	}
	obj.ETag, obj.Size = info.ETag, info.Size
	d.mu.Lock()
	d.got[obj.Key] = obj
	d.mu.Unlock()
	return nil
}

func (d *downloader) write(key string, r io.Reader) (err error) {
	f, err := d.root.OpenFile(key, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("failed to write object '%s': a file or directory of that name exists already", key)
		}
		return fmt.Errorf("failed to write object '%s': %w", key, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("failed to write object '%s': %w", key, cerr)
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if d.limit > 0 && d.written.Add(int64(n)) > d.limit {
				return fmt.Errorf("%w: objects of bucket '%s' exceed the limit of %d bytes", ErrTooLarge, d.bucket, d.limit)
			}
			if _, err := f.Write(buf[:n]); err != nil {
				return fmt.Errorf("failed to write object '%s': %w", key, err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("failed to get '%s' object: %w", key, rerr)
		}
	}
}
