package eventscmd

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

type options struct {
	allNamespaces bool
	watch         bool
	forSelector   string
	types         []string
}

// NewCommand returns `weir events`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Display Kubernetes events for Flux resources",
		Long:  "The events command shows the Kubernetes Events of Flux resources, oldest first.",
		Example: "  # Events of the Flux objects in the namespace\n  weir events\n\n" +
			"  # Events of a Kustomization and of its source\n  weir events --for Kustomization/podinfo\n\n" +
			"  # Warnings only, in every namespace\n  weir events -A --types warning",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return run(ctx, o, streams, deps)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "display events from Flux resources across all namespaces")
	f.BoolVarP(&o.watch, "watch", "w", false, "indicate if the events should be streamed")
	f.StringVar(&o.forSelector, "for", "", "get events for a particular object: Kind or Kind/name")
	f.StringSliceVar(&o.types, "types", nil, "filter events for certain types (valid types are: Normal, Warning)")
	return cmd
}

// query is one set of events to list: a namespace ("" for all) and a field
// selector on the involved object.
type query struct {
	ns       string
	selector fields.Selector
}

func run(ctx context.Context, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps) error {
	for _, t := range o.types {
		if !strings.EqualFold(t, corev1.EventTypeNormal) && !strings.EqualFold(t, corev1.EventTypeWarning) {
			return fmt.Errorf("type '%s' not supported. Supported types are Normal, Warning", t)
		}
	}
	c, err := deps.Client()
	if err != nil {
		return err
	}
	ns := deps.Namespace()
	queries, showNS, err := buildQueries(ctx, o, c, ns)
	if err != nil {
		return err
	}
	p := output.Progress{W: streams.ErrOut}
	ev := &eventPrinter{o: o, streams: streams, now: deps.Clock, showNS: showNS}
	if o.watch {
		return ev.watch(ctx, c, queries)
	}
	all, err := listEvents(ctx, c, queries)
	if err != nil {
		return err
	}
	sort.SliceStable(all, func(i, j int) bool { return eventTime(all[i]).Before(eventTime(all[j])) })
	var rows [][]string
	for _, e := range all {
		if ev.shown(e) {
			rows = append(rows, ev.row(e))
		}
	}
	if len(rows) == 0 {
		if o.allNamespaces {
			p.Failuref("No events found.")
		} else {
			p.Failuref("No events found in %s namespace.", ns)
		}
		return nil
	}
	return output.WriteTable(streams.Out, ev.header(), rows)
}

// buildQueries lists the event queries of the command: the namespace's (or
// every namespace's) events, or with --for those of the object and the
// objects related to it; showNS tells whether some lie in another namespace.
func buildQueries(ctx context.Context, o *options, c client.Client, ns string) (queries []query, showNS bool, err error) {
	main := query{ns: ns, selector: fields.Everything()}
	if o.allNamespaces {
		main.ns = ""
	}
	queries = []query{main}
	showNS = o.allNamespaces
	if o.forSelector == "" {
		return queries, showNS, nil
	}
	kindName, name, _ := strings.Cut(o.forSelector, "/")
	k, ok := kinds.ByKind(kindName)
	if kindName == "" || !ok {
		return nil, false, fmt.Errorf("'%s' is not a recognized Flux kind", kindName)
	}
	queries[0].selector = involved(k.Kind, name)
	if name == "" {
		return queries, showNS, nil
	}
	refs, err := related(ctx, c, k, ns, name)
	if err != nil {
		return nil, false, err
	}
	for _, r := range refs {
		queries = append(queries, query{ns: r.ns, selector: involved(r.kind, r.name)})
		if r.ns != ns {
			showNS = true
		}
	}
	return queries, showNS, nil
}

// listEvents returns the events matching any of queries.
func listEvents(ctx context.Context, c client.Client, queries []query) ([]corev1.Event, error) {
	var all []corev1.Event
	for _, q := range queries {
		list := &corev1.EventList{}
		opts := []client.ListOption{client.MatchingFieldsSelector{Selector: q.selector}}
		if q.ns != "" {
			opts = append(opts, client.InNamespace(q.ns))
		}
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing events: %w", err)
		}
		all = append(all, list.Items...)
	}
	return all, nil
}

func involved(kind, name string) fields.Selector {
	sel := fields.OneTermEqualSelector("involvedObject.kind", kind)
	if name == "" {
		return sel
	}
	return fields.AndSelectors(sel, fields.OneTermEqualSelector("involvedObject.name", name))
}

type ref struct{ kind, ns, name string }

// related lists the objects whose events belong with those of k ns/name:
// the source a Kustomization or HelmChart reads; for a HelmRelease, its
// chart's source and the HelmChart the controller makes for it. An object
// that no longer exists has none.
func related(ctx context.Context, c client.Client, k kinds.Kind, ns, name string) ([]ref, error) {
	var path []string
	switch k.Kind {
	case kinds.Kustomization.Kind, kinds.HelmChart.Kind:
		path = []string{"spec", "sourceRef"}
	case kinds.HelmRelease.Kind:
		path = []string{"spec", "chart", "spec", "sourceRef"}
	default:
		return nil, nil
	}
	u := k.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil // deleted: its own events are still worth showing
		}
		return nil, fmt.Errorf("reading %s %s in %s namespace: %w", k.Kind, name, ns, err)
	}
	var refs []ref
	if r, ok, _ := unstructured.NestedStringMap(u.Object, path...); ok && r["name"] != "" {
		rns := r["namespace"]
		if rns == "" {
			rns = ns
		}
		refs = append(refs, ref{kind: r["kind"], ns: rns, name: r["name"]})
	}
	if k.Kind == kinds.HelmRelease.Kind && len(refs) > 0 {
		refs = append(refs, ref{kind: kinds.HelmChart.Kind, ns: refs[0].ns, name: ns + "-" + name})
	}
	return refs, nil
}

type eventPrinter struct {
	o       *options
	streams genericiooptions.IOStreams
	now     func() time.Time
	showNS  bool
}

// shown keeps the events of Flux kinds, of the requested types.
func (p *eventPrinter) shown(e corev1.Event) bool {
	if _, ok := kinds.ByKind(e.InvolvedObject.Kind); !ok {
		return false
	}
	if len(p.o.types) == 0 {
		return true
	}
	for _, t := range p.o.types {
		if strings.EqualFold(t, e.Type) {
			return true
		}
	}
	return false
}

func (p *eventPrinter) header() []string {
	h := []string{"Last seen", "Type", "Reason", "Object", "Message"}
	if p.showNS {
		h = append([]string{"Namespace"}, h...)
	}
	return h
}

func (p *eventPrinter) row(e corev1.Event) []string {
	var r []string
	if p.showNS {
		r = append(r, e.Namespace)
	}
	return append(r, p.lastSeen(e), e.Type, e.Reason, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name, e.Message)
}

// lastSeen is kubectl's LAST SEEN: the age of the event, with the count
// and the span of a repeated one ("2m (x3 over 10m)").
func (p *eventPrinter) lastSeen(e corev1.Event) string {
	first := p.since(e.EventTime.Time)
	if e.EventTime.IsZero() {
		first = p.since(e.FirstTimestamp.Time)
	}
	switch {
	case e.Series != nil:
		return fmt.Sprintf("%s (x%d over %s)", p.since(e.Series.LastObservedTime.Time), e.Series.Count, first)
	case e.Count > 1:
		return fmt.Sprintf("%s (x%d over %s)", p.since(e.LastTimestamp.Time), e.Count, first)
	default:
		return first
	}
}

func (p *eventPrinter) since(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(p.now().Sub(t))
}

func eventTime(e corev1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// watch prints the events of every query as they come, until the timeout
// or an interrupt; the header comes with the first.
func (p *eventPrinter) watch(ctx context.Context, c client.WithWatch, queries []query) error {
	events := make(chan corev1.Event)
	errs := make(chan error, len(queries))
	for _, q := range queries {
		opts := []client.ListOption{client.MatchingFieldsSelector{Selector: q.selector}}
		if q.ns != "" {
			opts = append(opts, client.InNamespace(q.ns))
		}
		w, err := c.Watch(ctx, &corev1.EventList{}, opts...)
		if err != nil {
			return fmt.Errorf("watching events: %w", err)
		}
		go func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if ev.Type == watch.Error {
						errs <- fmt.Errorf("watching events: %w", apierrors.FromObject(ev.Object))
						return
					}
					if e, ok := ev.Object.(*corev1.Event); ok && ev.Type != watch.Deleted {
						select {
						case events <- *e:
						case <-ctx.Done():
							return
						}
					}
				}
			}
		}()
	}
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			return err
		case e := <-events:
			if !p.shown(e) {
				continue
			}
			var header []string
			if first {
				header = p.header()
				first = false
			}
			if err := output.WriteTable(p.streams.Out, header, [][]string{p.row(e)}); err != nil {
				return err
			}
		}
	}
}
