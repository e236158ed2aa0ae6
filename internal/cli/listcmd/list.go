// Package listcmd implements `weir list artifacts`: the tags of a registry
// repository with the digest and Flux metadata (source, revision, created)
// of the artifact each points at, filtered by regex or semver as flux does.
package listcmd

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/cli/registryflags"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// Artifact is one row of the listing.
type Artifact struct {
	URL      string `json:"url"`
	Digest   string `json:"digest"`
	Source   string `json:"source,omitempty"`
	Revision string `json:"revision,omitempty"`
	Created  string `json:"created,omitempty"`
}

type options struct {
	registry     registryflags.Flags
	regex, sem   string
	outputFormat string
}

// NewCommand returns `weir list`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List artifacts in an OCI registry"}
	o := &options{}
	art := &cobra.Command{
		Use:     "artifacts oci://REPO",
		Aliases: []string{"artifact"},
		Short:   "List the tags of an OCI repository with their Flux metadata",
		Example: `  # List the artifacts whose tags are semver versions within 1.x
  weir list artifacts oci://ghcr.io/org/app --filter-semver=">=1.0.0 <2.0.0"`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			rows, err := list(ctx, o, args[0])
			if err != nil {
				return err
			}
			return write(streams, o.outputFormat, rows)
		},
	}
	f := art.Flags()
	f.StringVar(&o.regex, "filter-regex", "", "filter tags returned from the OCI repository using regular expression")
	f.StringVar(&o.sem, "filter-semver", "", "filter tags returned from the OCI repository using semver")
	f.StringVarP(&o.outputFormat, "output", "o", "table", "the format in which the artifacts should be printed, can be 'table', 'json' or 'yaml'")
	o.registry.AddFlags(f)
	cmd.AddCommand(art)
	return cmd
}

func list(ctx context.Context, o *options, url string) ([]Artifact, error) {
	if o.outputFormat != "table" && o.outputFormat != output.FormatJSON && o.outputFormat != output.FormatYAML {
		return nil, fmt.Errorf("output format %q not supported, can be 'table', 'json' or 'yaml'", o.outputFormat)
	}
	// Bad filters fail before the registry is asked.
	if _, err := filterTags(nil, o.regex, o.sem); err != nil {
		return nil, err
	}
	repo, opts, err := o.registry.Repository(ctx, url)
	if err != nil {
		return nil, err
	}
	all, err := remote.List(repo, opts...)
	if err != nil {
		return nil, fmt.Errorf("listing tags of %s: %w", repo.String(), err)
	}
	tags, err := filterTags(all, o.regex, o.sem)
	if err != nil {
		return nil, err
	}
	rows := make([]Artifact, 0, len(tags))
	for _, t := range tags {
		a, err := oci.FetchArtifact(repo.Tag(t), opts...)
		if err != nil {
			return nil, err
		}
		row := Artifact{URL: repo.Tag(t).String(), Digest: a.Digest, Source: a.Metadata.Source, Revision: a.Metadata.Revision}
		if !a.Metadata.Created.IsZero() {
			row.Created = a.Metadata.Created.UTC().Format(time.RFC3339)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// filterTags keeps the tags matching regex and, with a semver constraint,
// those that are versions within it, newest first.
func filterTags(tags []string, regex, constraint string) ([]string, error) {
	var re *regexp.Regexp
	if regex != "" {
		var err error
		if re, err = regexp.Compile(regex); err != nil {
			return nil, fmt.Errorf("invalid --filter-regex %q: %w", regex, err)
		}
	}
	var c *semver.Constraints
	if constraint != "" {
		var err error
		if c, err = semver.NewConstraint(constraint); err != nil {
			return nil, fmt.Errorf("invalid --filter-semver %q: %w", constraint, err)
		}
	}
	var kept []string
	versions := map[string]*semver.Version{}
	for _, t := range tags {
		if re != nil && !re.MatchString(t) {
			continue
		}
		if c != nil {
			v, err := semver.NewVersion(t)
			if err != nil || !c.Check(v) {
				continue
			}
			versions[t] = v
		}
		kept = append(kept, t)
	}
	if c != nil {
		slices.SortStableFunc(kept, func(a, b string) int { return versions[b].Compare(versions[a]) })
	}
	return kept, nil
}

func write(streams genericiooptions.IOStreams, format string, rows []Artifact) error {
	if format != "table" {
		return output.WriteValue(streams.Out, format, rows)
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		table = append(table, []string{r.URL, r.Digest, r.Source, r.Revision, r.Created})
	}
	return output.WriteTable(streams.Out, []string{"ARTIFACT", "DIGEST", "SOURCE", "REVISION", "CREATED"}, table)
}
