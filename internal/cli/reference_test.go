package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// TestCommandReference keeps docs/cli.md, the list of every command path
// with its one-line purpose, equal to the command tree: a verb added or
// renamed without the page fails here; -update rewrites the page.
func TestCommandReference(t *testing.T) {
	root := cli.NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	var b strings.Builder
	b.WriteString(`# weir's commands

Every command path of the ` + "`weir`" + ` CLI with its one-line purpose, as ` + "`weir <path> --help`" + ` prints it. Written from
the command tree by ` + "`go test ./internal/cli -run TestCommandReference -update`" + `, and checked against it by the
same test: a command missing here fails the build. Flags and examples: ` + "`weir <path> --help`" + `; the flags of
build, diff, export, get and create that follow flux 2.9, and what weir does with each: [cli-flags.md](cli-flags.md).

| command | what it does |
| --- | --- |
`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			use := sub.CommandPath()
			if args := strings.TrimSpace(strings.TrimPrefix(sub.Use, sub.Name())); args != "" && sub.Runnable() {
				use += " " + args
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", strings.ReplaceAll(use, "|", `\|`), strings.ReplaceAll(sub.Short, "|", `\|`))
			walk(sub)
		}
	}
	walk(root)
	golden.Assert(t, filepath.Join("..", "..", "docs", "cli.md"), []byte(b.String()))
}
