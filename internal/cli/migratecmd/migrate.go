package migratecmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
)

// flags are `weir migrate`'s options.
type flags struct {
	path       string
	extensions []string
	version    string
	yes        bool
	dryRun     bool
}

// NewCommand returns `weir migrate`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:   "migrate",
		Args:  cobra.NoArgs,
		Short: "Migrate the Flux custom resources to their latest API version",
		Long: `The migrate command must be run before a Flux minor version upgrade.

The command has two modes of operation:

- Cluster mode (default): migrates all the Flux custom resources stored in Kubernetes etcd to their latest API version.
- File system mode (-f): migrates the Flux custom resources defined in the manifests located in the specified path.
`,
		Example: "  # Migrate all the Flux custom resources in the cluster.\n  weir migrate\n\n" +
			"  # Migrate all the Flux custom resources in a Git repository checked out in the current directory.\n  weir migrate -f .\n\n" +
			"  # Migrate Flux custom resources defined in YAML and Helm template files.\n  weir migrate -f . --extensions=.yml,.yaml,.tpl\n\n" +
			"  # Simulate the migration without making any changes.\n  weir migrate -f . --dry-run\n\n" +
			"  # Run the migration skipping confirmation prompts.\n  weir migrate -f . --yes",
		RunE: func(c *cobra.Command, _ []string) error {
			p := output.Progress{W: streams.ErrOut}
			if f.path == "" {
				ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
				defer cancel()
				p.Actionf("starting migration of custom resources")
				cl, err := deps.Client()
				if err != nil {
					return fmt.Errorf("the Kubernetes client initialization failed: %w", err)
				}
				if err := migrateCluster(ctx, cl, p); err != nil {
					return err
				}
				p.Successf("custom resources migrated successfully")
				return nil
			}
			latest, err := latestVersions(f.version)
			if err != nil {
				return err
			}
			return migrateFiles(streams, p, f, latest)
		},
	}
	cmd.Flags().StringVarP(&f.path, "path", "f", "", "the path to the directory containing the manifests to migrate")
	cmd.Flags().StringSliceVarP(&f.extensions, "extensions", "e", []string{".yaml", ".yml"},
		"the file extensions to consider when migrating manifests, only applicable with --path")
	cmd.Flags().StringVarP(&f.version, "version", "v", "",
		"the target Flux minor version to migrate manifests to, only applicable with --path (defaults to the version weir serves)")
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "skip confirmation prompts when migrating manifests, only applicable with --path")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "simulate the migration of manifests without making any changes, only applicable with --path")
	return cmd
}

// fileUpgrades are the upgrades found in one file.
type fileUpgrades struct {
	file     string
	upgrades []Upgrade
}

func migrateFiles(streams genericiooptions.IOStreams, p output.Progress, f flags, latest map[schema.GroupKind]string) error {
	p.Actionf("starting migration of custom resources")
	files, err := listFiles(p, filepath.Clean(f.path), f.extensions)
	if err != nil {
		return err
	}
	var found []fileUpgrades
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("failed to read file %s: %w", file, err)
		}
		ups := Detect(data, latest)
		for _, u := range ups {
			p.Generatef("%s:%d: %s %s -> %s", file, u.Line+1, u.Kind, u.From, u.To)
		}
		if len(ups) > 0 {
			found = append(found, fileUpgrades{file: file, upgrades: ups})
		}
	}
	if len(found) == 0 {
		p.Successf("no custom resources found that require migration")
		return nil
	}
	if f.dryRun {
		p.Successf("dry-run mode enabled, no changes will be made")
		return nil
	}
	if !f.yes && !output.Confirm(streams.In, streams.ErrOut, "Are you sure you want to proceed with the above upgrades") {
		return errors.New("aborting")
	}
	for _, fu := range found {
		if err := rewriteFile(fu); err != nil {
			return err
		}
		p.Successf("file %s migrated successfully", fu.file)
	}
	p.Successf("custom resources migrated successfully")
	return nil
}

// rewriteFile applies the upgrades to the file, keeping its permissions.
func rewriteFile(fu fileUpgrades) error {
	info, err := os.Stat(fu.file)
	if err != nil {
		return fmt.Errorf("failed to stat file %s: %w", fu.file, err)
	}
	data, err := os.ReadFile(fu.file)
	if err != nil {
		return fmt.Errorf("failed to read file %s: %w", fu.file, err)
	}
	if err := os.WriteFile(fu.file, Apply(data, fu.upgrades), info.Mode().Perm()); err != nil {
		return fmt.Errorf("failed to write file %s: %w", fu.file, err)
	}
	return nil
}

// listFiles is path itself when it is a file, else the regular files below
// it (in lexical order) whose names end in one of the extensions.
func listFiles(p output.Progress, path string, extensions []string) ([]string, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to stat path %s: %w", path, err)
	}
	if !info.IsDir() {
		if !matches(path, extensions) {
			return nil, fmt.Errorf("file %s does not match the specified extensions: %s", path, strings.Join(extensions, ", "))
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("file %s is irregular", path)
		}
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !matches(file, extensions) {
			return nil
		}
		if !d.Type().IsRegular() {
			p.Warningf("skipping irregular file %s", file)
			return nil
		}
		files = append(files, file)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to walk directory %s: %w", path, err)
	}
	return files, nil
}

func matches(file string, extensions []string) bool {
	for _, ext := range extensions {
		if strings.HasSuffix(file, ext) {
			return true
		}
	}
	return false
}
