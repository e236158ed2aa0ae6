package git

import "testing"

func TestValidTreePath(t *testing.T) {
	for name, ok := range map[string]bool{
		"a/b.yaml": true, ".github/workflows/x.yaml": true, ".gitignore": true, "a/.gitkeep": true,
		".git/config": false, "a/.GIT/hooks": false, "../x": false, "a/../b": false, "a//b": false,
		"./a": false, "a\\b": false, "a\x00b": false,
	} {
		if err := validTreePath(name); (err == nil) != ok {
			t.Errorf("validTreePath(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}
