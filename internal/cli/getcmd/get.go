package getcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// options are the flags of `get`, shared by its subcommands.
type options struct {
	allNamespaces  bool
	noHeader       bool
	watch          bool
	statusSelector string
	labelSelector  string
	output         string
	// showSource adds the SOURCE column (Kind/namespace/name) to the
	// tables of Kustomizations and HelmReleases, as -o wide does.
	showSource bool
}

// NewCommand returns `weir get` with a subcommand per kind.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Get the resources and their status",
		Long:  "The get sub-commands print the statuses of Flux resources.",
	}
	f := cmd.PersistentFlags()
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the requested object(s) across all namespaces")
	f.BoolVar(&o.noHeader, "no-header", false, "skip the header when printing the results")
	f.BoolVarP(&o.watch, "watch", "w", false, "after listing/getting the requested object, watch for changes")
	f.StringVar(&o.statusSelector, "status-selector", "",
		"specify the status condition name and the desired state to filter the get result, e.g. ready=false")
	f.StringVarP(&o.labelSelector, "label-selector", "l", "", "filter objects by label selector")
	f.StringVarP(&o.output, "output", "o", "", "output format: yaml, json, wide or name (default: Flux's table)")

	run := func(set []kinds.Kind, all bool) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			g, err := newGetter(o, streams, deps)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return g.run(ctx, set, all, args)
		}
	}

	cmd.AddCommand(
		groupCommand(deps, run, group{use: "sources", alias: "source", short: "Get source statuses",
			long:     "The get source sub-commands print the statuses of the sources.",
			allShort: "Get all source statuses", allLong: "The get sources all command prints the statuses of all sources."},
			kinds.Sources),
		groupCommand(deps, run, group{use: "images", alias: "image", short: "Get image automation object status",
			long:     "The get image sub-commands print the status of image automation objects.",
			allShort: "Get all image statuses", allLong: "The get images all command prints the statuses of all image objects."},
			kinds.Images),
		artifactsCommand(deps, run))
	ks, hr := kindCommand(deps, kinds.Kustomization, run), kindCommand(deps, kinds.HelmRelease, run)
	for _, c := range []*cobra.Command{ks, hr} {
		c.Flags().BoolVar(&o.showSource, "show-source", false, "show the source of the objects (Kind/namespace/name) in a SOURCE column")
	}
	cmd.AddCommand(ks, hr, kindCommand(deps, kinds.Receiver, run), kindCommand(deps, kinds.Provider, run), kindCommand(deps, kinds.Alert, run))
	cmd.AddCommand(&cobra.Command{
		Use: "all", Short: "Get all resources and statuses", Args: cobra.NoArgs,
		Long: "The get all command prints the statuses of all resources.",
		RunE: run(kinds.All, true),
	})
	return cmd
}

// group is the help of a command that gathers kinds (`get sources`, `get
// images`) and of its `all` subcommand.
type group struct{ use, alias, short, long, allShort, allLong string }

func groupCommand(deps *clideps.Deps, run func([]kinds.Kind, bool) func(*cobra.Command, []string) error, g group,
	set []kinds.Kind) *cobra.Command {
	cmd := &cobra.Command{Use: g.use, Aliases: []string{g.alias}, Short: g.short, Long: g.long}
	cmd.AddCommand(&cobra.Command{Use: "all", Short: g.allShort, Long: g.allLong, Args: cobra.NoArgs, RunE: run(set, true)})
	for _, k := range set {
		cmd.AddCommand(kindCommand(deps, k, run))
	}
	return cmd
}

// artifactsCommand is `get artifacts` (alias artifact), the flux CLI's
// home of the ArtifactGenerators: it has no `all` of its own.
func artifactsCommand(deps *clideps.Deps, run func([]kinds.Kind, bool) func(*cobra.Command, []string) error) *cobra.Command {
	cmd := &cobra.Command{Use: "artifacts", Aliases: []string{"artifact"}, Short: "Get artifact object status",
		Long: "The get artifact sub-commands print the status of artifact objects."}
	for _, k := range kinds.Artifacts {
		cmd.AddCommand(kindCommand(deps, k, run))
	}
	return cmd
}

func kindCommand(deps *clideps.Deps, k kinds.Kind, run func([]kinds.Kind, bool) func(*cobra.Command, []string) error) *cobra.Command {
	aliases := k.Aliases
	if k.GetUse != k.Use {
		aliases = append([]string{k.Use}, aliases...)
	}
	return &cobra.Command{
		Use:               k.GetUse + " [name]",
		Aliases:           aliases,
		Short:             fmt.Sprintf("Get %s statuses", k.Kind),
		Long:              fmt.Sprintf("The get %s command prints the status of the %s objects.", k.GetUse, k.Kind),
		Args:              cobra.MaximumNArgs(1),
		RunE:              run([]kinds.Kind{k}, false),
		ValidArgsFunction: kindcmd.CompleteNames(deps, k),
	}
}

type getter struct {
	o        *options
	streams  genericiooptions.IOStreams
	deps     *clideps.Deps
	progress output.Progress
	client   client.WithWatch
	ns       string
	selector labels.Selector
	condType string
	condStat string
}

func newGetter(o *options, streams genericiooptions.IOStreams, deps *clideps.Deps) (*getter, error) {
	if err := output.CheckFormat(o.output); err != nil {
		return nil, err
	}
	g := &getter{o: o, streams: streams, deps: deps, progress: output.Progress{W: streams.ErrOut}, ns: deps.Namespace()}
	if o.statusSelector != "" {
		t, s, ok := strings.Cut(o.statusSelector, "=")
		if !ok {
			return nil, fmt.Errorf("expected status selector in type=status format, but found: %s", o.statusSelector)
		}
		g.condType, g.condStat = t, s
	}
	if o.labelSelector != "" {
		sel, err := labels.Parse(o.labelSelector)
		if err != nil {
			return nil, fmt.Errorf("unable to parse label selector: %w", err)
		}
		g.selector = sel
	}
	c, err := deps.Client()
	if err != nil {
		return nil, err
	}
	g.client = c
	return g, nil
}

func (g *getter) listOptions(name string) []client.ListOption {
	var opts []client.ListOption
	if !g.o.allNamespaces {
		opts = append(opts, client.InNamespace(g.ns))
	}
	if name != "" {
		opts = append(opts, client.MatchingFields{"metadata.name": name})
	}
	if g.selector != nil {
		opts = append(opts, client.MatchingLabelsSelector{Selector: g.selector})
	}
	return opts
}

func (g *getter) nsDescription() string {
	if g.o.allNamespaces {
		return "any"
	}
	return fmt.Sprintf("%q", g.ns)
}

func (g *getter) matches(u *unstructured.Unstructured) bool {
	return g.condType == "" || kinds.StatusMatches(u, g.condType, g.condStat)
}

// tableOutput tells whether -o asks for a table (the default, or wide).
func (g *getter) tableOutput() bool {
	return g.o.output == output.FormatTable || g.o.output == output.FormatWide
}

// matching keeps the objects that pass the --status-selector.
func (g *getter) matching(objs []unstructured.Unstructured) []unstructured.Unstructured {
	var items []unstructured.Unstructured
	for i := range objs {
		if g.matches(&objs[i]) {
			items = append(items, objs[i])
		}
	}
	return items
}

func (g *getter) run(ctx context.Context, set []kinds.Kind, all bool, args []string) error {
	var name string
	if len(args) > 0 {
		name = args[0]
	}
	if g.o.watch {
		if all {
			return errors.New("expected a single resource type, but found all")
		}
		return g.watch(ctx, set[0], name)
	}
	var collected []unstructured.Unstructured
	for _, k := range set {
		list := k.NewList()
		if err := g.client.List(ctx, list, g.listOptions(name)...); err != nil {
			if all && apimeta.IsNoMatchError(err) {
				continue // that API is not installed: nothing to show
			}
			return fmt.Errorf("listing %s objects: %w", k.Kind, err)
		}
		if len(list.Items) == 0 {
			if all {
				continue
			}
			if name != "" {
				return &output.ExitError{Code: 1, Err: fmt.Errorf("%s object '%s' not found in %s namespace", k.Kind, name, g.nsDescription())}
			}
			if g.tableOutput() {
				g.progress.Failuref("no %s objects found in %s namespace", k.Kind, g.nsDescription())
				return nil
			}
		}
		items := g.matching(list.Items)
		switch g.o.output {
		case output.FormatTable, output.FormatWide:
			if err := g.table(k, items, all); err != nil {
				return err
			}
			if all {
				fmt.Fprintln(g.streams.Out)
			}
		default:
			for i := range items {
				items[i].SetGroupVersionKind(k.GVK())
			}
			collected = append(collected, items...)
		}
	}
	if g.tableOutput() {
		return nil
	}
	return output.WriteList(g.streams.Out, g.o.output, collected)
}

// header names the columns of k's table: the flux CLI's, without REVISION
// for a kind that has none (Receiver); -o wide adds SOURCE, where the kind
// reads from somewhere, SHARD for the kinds whose controllers are sharded,
// and AGE; --show-source adds SOURCE alone.
func (g *getter) header(k kinds.Kind, wide bool) []string {
	if g.o.noHeader {
		return nil
	}
	h := []string{"Name"}
	if k.HasRevision() {
		h = append(h, "Revision")
	}
	for _, c := range k.Columns() {
		h = append(h, c.Header)
	}
	if k.HasSuspended() {
		h = append(h, "Suspended")
	}
	h = append(h, "Ready", "Message")
	if (wide || g.o.showSource) && k.HasOrigin() {
		h = append(h, "Source")
	}
	if wide && sharded(k) {
		h = append(h, "Shard")
	}
	if wide {
		h = append(h, "Age")
	}
	if g.o.allNamespaces {
		h = append([]string{"Namespace"}, h...)
	}
	return h
}

func (g *getter) table(k kinds.Kind, items []unstructured.Unstructured, withKind bool) error {
	wide := g.o.output == output.FormatWide
	rows := make([][]string, 0, len(items))
	for i := range items {
		rows = append(rows, g.row(k, &items[i], withKind, wide))
	}
	return output.WriteTable(g.streams.Out, g.header(k, wide), rows)
}

// row is one line of Flux's table. Hex digests are shortened as the flux
// CLI does; -o wide shows them whole and adds where the object reads from
// and its age.
func (g *getter) row(k kinds.Kind, u *unstructured.Unstructured, withKind, wide bool) []string {
	name := u.GetName()
	if withKind {
		name = strings.ToLower(k.Kind) + "/" + name
	}
	var row []string
	if g.o.allNamespaces {
		row = append(row, u.GetNamespace())
	}
	status, msg := k.ReadyStatus(u)
	rev := k.Revision(u)
	// The flux CLI shortens digests in the tables of kinds with revisions;
	// a Receiver's message carries its webhook path, which stays whole.
	if !wide && k.HasRevision() {
		rev, msg = output.TruncateHex(rev), output.TruncateHex(msg)
	}
	suspended := "False"
	if kinds.Suspended(u) {
		suspended = "True"
	}
	row = append(row, name)
	if k.HasRevision() {
		row = append(row, rev)
	}
	for _, c := range k.Columns() {
		row = append(row, c.Value(u))
	}
	if k.HasSuspended() {
		row = append(row, suspended)
	}
	row = append(row, status, msg)
	if (wide || g.o.showSource) && k.HasOrigin() {
		row = append(row, k.Origin(u))
	}
	if wide && sharded(k) {
		row = append(row, u.GetLabels()[meta.ShardKeyLabel])
	}
	if wide {
		row = append(row, g.age(u))
	}
	return row
}

// sharded reports whether k's controllers run in shards (source,
// kustomize and helm, as Flux shards them): its objects' shard is the
// value of their sharding.fluxcd.io/key label, empty on the main shard.
func sharded(k kinds.Kind) bool {
	return k.Source || k.Kind == kinds.Kustomization.Kind || k.Kind == kinds.HelmRelease.Kind
}

func (g *getter) age(u *unstructured.Unstructured) string {
	created := u.GetCreationTimestamp()
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(g.deps.Clock().Sub(created.Time))
}

// watch prints the objects as the API server reports them, one row (or
// document) per change, until the timeout or an interrupt.
func (g *getter) watch(ctx context.Context, k kinds.Kind, name string) error {
	w, err := g.client.Watch(ctx, k.NewList(), g.listOptions(name)...)
	if err != nil {
		return fmt.Errorf("watching %s objects: %w", k.Kind, err)
	}
	defer w.Stop()
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("watching %s objects: %v", k.Kind, ev.Object)
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || !g.matches(u) {
				continue
			}
			if err := g.printWatched(k, u, first); err != nil {
				return err
			}
			first = false
		}
	}
}

func (g *getter) printWatched(k kinds.Kind, u *unstructured.Unstructured, first bool) error {
	switch g.o.output {
	case output.FormatTable, output.FormatWide:
		wide := g.o.output == output.FormatWide
		var header []string
		if first {
			header = g.header(k, wide)
		}
		return output.WriteTable(g.streams.Out, header, [][]string{g.row(k, u, false, wide)})
	case output.FormatName:
		_, err := fmt.Fprintln(g.streams.Out, output.QualifiedName(u))
		return err
	default:
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		data, err := yaml.Marshal(c.Object)
		if g.o.output == output.FormatJSON {
			data, err = c.MarshalJSON()
			data = append(data, '\n')
		} else {
			data = append([]byte("---\n"), data...)
		}
		if err != nil {
			return err
		}
		_, err = g.streams.Out.Write(data)
		return err
	}
}
