package bucket

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrUnsafeKey is wrapped by every error about an object key that cannot
// become a file below the download directory.
var ErrUnsafeKey = errors.New("unsafe object key")

// CheckKey accepts an object key only when it is a clean, relative,
// slash-separated path: not empty, no leading "/", no NUL or backslash, and
// no empty, "." or ".." segment. Such a key names exactly one file below any
// directory, so two keys never land on the same file and none can climb
// out. Object stores allow all of these; Flux joins keys to its download
// directory as they come, which lets "../x" write outside it.
func CheckKey(key string) error {
	reason := ""
	switch {
	case key == "":
		reason = "it is empty"
	case strings.HasPrefix(key, "/"):
		reason = "it is absolute"
	case strings.ContainsRune(key, 0):
		reason = "it contains a NUL byte"
	case strings.ContainsRune(key, '\\'):
		reason = "it contains a backslash"
	default:
		reason = segmentProblem(key)
	}
	if reason == "" && !filepath.IsLocal(filepath.FromSlash(key)) {
		reason = "it is not a local path on this system"
	}
	if reason != "" {
		return fmt.Errorf("%w: %s", ErrUnsafeKey, reason)
	}
	return nil
}

func segmentProblem(key string) string {
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "..":
			return "it has a '..' segment"
		case ".", "":
			return "it is not a clean path (empty or '.' segment)"
		}
	}
	return ""
}
