package plugincmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
)

// groupID marks the commands Register adds for discovered plugins.
const groupID = "plugin"

// env is what the plugin subcommands work with.
type env struct {
	streams genericiooptions.IOStreams
	deps    *clideps.Deps
	p       output.Progress
}

// NewCommand returns `weir plugin` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	e := &env{streams: streams, deps: deps, p: output.Progress{W: streams.ErrOut}}
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Manage Flux CLI plugins",
		Long:  "The plugin sub-commands manage Flux CLI plugins, which weir runs as `weir NAME`.",
	}
	cmd.AddCommand(e.listCommand(), e.searchCommand(), e.installCommand(), e.uninstallCommand(), e.updateCommand())
	return cmd
}

// builtins are the root's own commands, which no plugin may shadow.
func builtins(c *cobra.Command) map[string]bool {
	out := map[string]bool{}
	for _, sub := range c.Root().Commands() {
		if sub.GroupID != groupID {
			out[sub.Name()] = true
		}
	}
	return out
}

func (e *env) client() *client {
	return newClient(&http.Client{Timeout: 30 * time.Second})
}

func (e *env) installer() *installer {
	now := time.Now
	if e.deps.Now != nil {
		now = e.deps.Now
	}
	return &installer{http: &http.Client{Timeout: 5 * time.Minute}, now: now}
}

func (e *env) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List installed plugins",
		Long:    "The plugin list command shows all installed plugins with their versions and paths.",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir := Dir()
			plugins := Discover(dir, builtins(c))
			if len(plugins) == 0 {
				fmt.Fprintln(e.streams.ErrOut, "No plugins found")
				return nil
			}
			rows := make([][]string, 0, len(plugins))
			for _, p := range plugins {
				version := "manual"
				if r := readReceipt(dir, p.Name); r != nil {
					version = r.Version
				}
				rows = append(rows, []string{p.Name, version, p.Path})
			}
			return output.WriteTable(e.streams.Out, []string{"NAME", "VERSION", "PATH"}, rows)
		},
	}
}

func (e *env) searchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "search [query]",
		Short: "Search the plugin catalog",
		Long:  "The plugin search command lists available plugins from the Flux plugin catalog.",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cat, err := e.client().catalog(c.Context())
			if err != nil {
				return err
			}
			query := ""
			if len(args) == 1 {
				query = strings.ToLower(args[0])
			}
			dir := Dir()
			var rows [][]string
			for _, p := range cat.Plugins {
				if query != "" && !strings.Contains(strings.ToLower(p.Name), query) &&
					!strings.Contains(strings.ToLower(p.Description), query) {
					continue
				}
				installed := ""
				if r := readReceipt(dir, p.Name); r != nil {
					installed = r.Version
				}
				rows = append(rows, []string{p.Name, p.Description, installed})
			}
			switch {
			case len(rows) > 0:
				return output.WriteTable(e.streams.Out, []string{"NAME", "DESCRIPTION", "INSTALLED"}, rows)
			case query != "":
				fmt.Fprintf(e.streams.ErrOut, "No plugins matching %q found in catalog\n", query)
			default:
				fmt.Fprintln(e.streams.ErrOut, "No plugins found in catalog")
			}
			return nil
		},
	}
}

func (e *env) installCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "install <name>[@<version>|@<digest>]",
		Short: "Install a plugin from the catalog",
		Long:  "The plugin install command downloads and installs a plugin from the Flux plugin catalog.",
		Example: `  # Install the latest version
  weir plugin install operator

  # Install a specific version
  weir plugin install operator@0.45.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name, version, _ := strings.Cut(args[0], "@")
			m, err := e.client().manifest(c.Context(), name)
			if err != nil {
				return err
			}
			v, p, err := resolve(m, version, runtime.GOOS, runtime.GOARCH)
			if err != nil {
				return err
			}
			dir, err := ensureDir()
			if err != nil {
				return err
			}
			e.p.Actionf("installing %s v%s", name, v.Version)
			if err := e.installer().install(c.Context(), dir, m, v, p); err != nil {
				return err
			}
			e.p.Successf("installed %s v%s", name, v.Version)
			return nil
		},
	}
}

func (e *env) uninstallCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "uninstall <name>",
		Aliases: []string{"delete"},
		Short:   "Uninstall a plugin",
		Long:    "The plugin uninstall command removes a plugin binary and its receipt from the plugin directory.",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if !validName.MatchString(args[0]) {
				return fmt.Errorf("plugin %q is not installed", args[0])
			}
			if err := uninstall(Dir(), args[0]); err != nil {
				return err
			}
			e.p.Successf("uninstalled %s", args[0])
			return nil
		},
	}
}

func (e *env) updateCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "update [name]",
		Aliases: []string{"upgrade"},
		Short:   "Update installed plugins",
		Long:    "The plugin update command updates installed plugins to their latest versions.",
		Example: `  # Update a single plugin
  weir plugin update operator

  # Update all installed plugins
  weir plugin update`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := Dir()
			plugins := Discover(dir, builtins(c))
			if len(plugins) == 0 {
				fmt.Fprintln(e.streams.ErrOut, "No plugins found")
				return nil
			}
			if len(args) == 1 {
				var only []Plugin
				for _, p := range plugins {
					if p.Name == args[0] {
						only = append(only, p)
					}
				}
				if len(only) == 0 {
					return fmt.Errorf("plugin %q is not installed", args[0])
				}
				plugins = only
			}
			cl, in := e.client(), e.installer()
			for _, p := range plugins {
				e.update(c.Context(), cl, in, dir, p.Name)
			}
			return nil
		},
	}
}

// update moves one plugin to the catalog's newest version, reporting as
// flux does; a plugin without a receipt was put there by hand and is left
// alone.
func (e *env) update(ctx context.Context, cl *client, in *installer, dir, name string) {
	r := readReceipt(dir, name)
	if r == nil {
		e.p.Warningf("skipping %s (manually installed)", name)
		return
	}
	m, err := cl.manifest(ctx, name)
	if err != nil {
		e.p.Failuref("error checking %s: %v", name, err)
		return
	}
	v, p, err := resolve(m, "", runtime.GOOS, runtime.GOARCH)
	switch {
	case err != nil:
		e.p.Failuref("error checking %s: %v", name, err)
		return
	case v.Version == r.Version:
		e.p.Successf("%s already up to date (v%s)", name, r.Version)
		return
	}
	e.p.Actionf("updating %s v%s → v%s", name, r.Version, v.Version)
	if err := in.install(ctx, dir, m, v, p); err != nil {
		e.p.Failuref("error updating %s: %v", name, err)
		return
	}
	e.p.Successf("updated %s v%s → v%s", name, r.Version, v.Version)
}

// Register adds a command to root for each plugin of the plugin directory
// that no builtin shadows; running it runs the plugin with the arguments
// after its name, with weir's streams, and exits with its exit code.
func Register(root *cobra.Command, streams genericiooptions.IOStreams) {
	plugins := Discover(Dir(), builtins(root))
	if len(plugins) == 0 {
		return
	}
	if !root.ContainsGroup(groupID) {
		root.AddGroup(&cobra.Group{ID: groupID, Title: "Plugin Commands:"})
	}
	for _, p := range plugins {
		root.AddCommand(&cobra.Command{
			Use:                p.Name,
			Short:              fmt.Sprintf("Runs the %s plugin", p.Name),
			Long:               fmt.Sprintf("This command runs the %s plugin.\nUse 'weir %s --help' for full plugin help.", p.Name, p.Name),
			DisableFlagParsing: true,
			GroupID:            groupID,
			RunE: func(c *cobra.Command, args []string) error {
				return run(c.Context(), streams, p.Path, args)
			},
		})
	}
}

// run runs the plugin at path; a non-zero exit becomes an ExitError with
// no message, since the plugin has spoken for itself.
func run(ctx context.Context, streams genericiooptions.IOStreams, path string, args []string) error {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.ErrOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &output.ExitError{Code: exit.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("running plugin %s: %w", path, err)
	}
	return nil
}
