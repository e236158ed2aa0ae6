package bucket

import (
	"errors"
	"testing"
)

func TestCheckKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"app.yaml", true},
		{"deploy/base/app.yaml", true},
		{".sourceignore", true},
		{"dir/.hidden", true},
		{"...", true},
		{"..foo/bar", true},
		{"with space/é.yaml", true},
		{"a+b=c;d", true},

		{"", false},
		{"/etc/x", false},
		{"//etc/x", false},
		{"../evil.yaml", false},
		{"..", false},
		{"a/../../evil.yaml", false},
		{"a/../b.yaml", false}, // stays inside, but would collide with b.yaml
		{"a/..", false},
		{"./a.yaml", false},
		{"a/./b.yaml", false},
		{"a//b.yaml", false},
		{".", false},
		{"a\\..\\..\\evil", false},
		{"nul\x00byte", false},
	}
	for _, tt := range tests {
		err := CheckKey(tt.key)
		if (err == nil) != tt.ok {
			t.Errorf("CheckKey(%q) = %v, want ok=%v", tt.key, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrUnsafeKey) {
			t.Errorf("CheckKey(%q) = %v, does not wrap ErrUnsafeKey", tt.key, err)
		}
	}
}
