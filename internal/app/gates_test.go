package app

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGateTableDocumented holds docs/install.md's --feature-gates table to
// featureGatesOf: every gate weir accepts has a row naming the controllers
// that accept it and whether weir acts on it, and the table names no other.
func TestGateTableDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(b), "### `--feature-gates`\n")
	if !found {
		t.Fatal("docs/install.md has no `--feature-gates` section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	documented := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "`") {
			continue
		}
		gate := strings.Trim(cells[0], "`")
		if !strings.HasPrefix(cells[2], "acted on") && !strings.HasPrefix(cells[2], "accepted, no effect") {
			t.Errorf("%s: the row says neither \"acted on\" nor \"accepted, no effect\": %q", gate, cells[2])
		}
		documented[gate] = strings.Split(cells[1], ", ")
	}
	accepted := map[string][]string{}
	for _, c := range AllControllers() {
		for _, gate := range featureGatesOf[c] {
			accepted[gate] = append(accepted[gate], c)
		}
	}
	if diff := cmp.Diff(accepted, documented); diff != "" {
		t.Errorf("docs/install.md's gate table (+) against featureGatesOf (-), as gate → controllers in registry order:\n%s", diff)
	}
	for c := range featureGatesOf {
		if !slices.Contains(AllControllers(), c) {
			t.Errorf("featureGatesOf names %q, which is no controller", c)
		}
	}
}
