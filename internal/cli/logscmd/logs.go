package logscmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
)

// DevLogFile is the file `weir dev` writes the controllers' logs to, in
// the directory that also holds its kubeconfig.
const DevLogFile = "weir-controller.log"

// partOfSelector selects Flux's deployments, as the flux CLI does.
const partOfSelector = "app.kubernetes.io/part-of=flux"

// controllerContainer is read when a controller pod has several containers.
const controllerContainer = "manager"

type options struct {
	level, kind, name  string
	fluxNamespace      string
	allNamespaces      bool
	follow             bool
	tail               int64
	since              time.Duration
	sinceTime, logFile string
}

// NewCommand returns `weir logs`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{tail: -1}
	level := &levelFlag{}
	cmd := &cobra.Command{
		Use:   "logs",
		Args:  cobra.NoArgs,
		Short: "Display formatted logs for Flux components",
		Long: `The logs command displays formatted logs from various Flux components: the pods of the Flux
deployments in --flux-namespace, or a log file (--log-file; by default the one weir dev writes beside the
kubeconfig in use).`,
		Example: `  # Print the reconciliation logs of all Flux custom resources in your cluster
  weir logs --all-namespaces

  # Stream logs for a particular log level
  weir logs --follow --level=error --all-namespaces

  # Filter logs by kind, name and namespace
  weir logs --kind=Kustomization --name=podinfo --namespace=default

  # Read the logs of controllers running locally
  weir logs -A --log-file ~/.weir/dev/weir-controller.log`,
		RunE: func(c *cobra.Command, _ []string) error {
			o.level = level.value
			return run(c.Context(), o, streams, deps)
		},
	}
	f := cmd.Flags()
	f.Var(level, "level", "log level, available options are: (debug, info, error)")
	f.StringVar(&o.kind, "kind", "", "displays errors of a particular toolkit kind e.g GitRepository")
	f.StringVar(&o.name, "name", "", "specifies the name of the object logs to be displayed")
	f.BoolVarP(&o.follow, "follow", "f", false, "specifies if the logs should be streamed")
	f.Int64Var(&o.tail, "tail", -1, "lines of recent log file to display")
	f.StringVar(&o.fluxNamespace, "flux-namespace", "flux-system", "the namespace where the Flux components are running")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "displays logs for objects across all namespaces")
	f.DurationVar(&o.since, "since", 0, "Only return logs newer than a relative duration like 5s, 2m, or 3h. Defaults to all logs. Only one of since-time / since may be used.")
	f.StringVar(&o.sinceTime, "since-time", "", "Only return logs after a specific date (RFC3339). Defaults to all logs. Only one of since-time / since may be used.")
	f.StringVar(&o.logFile, "log-file", "", "read the controllers' JSON logs from this file instead of the cluster's pods")
	return cmd
}

// levelFlag is --level: debug, info or error.
type levelFlag struct{ value string }

func (l *levelFlag) String() string { return l.value }
func (l *levelFlag) Type() string   { return "logLevel" }
func (l *levelFlag) Set(s string) error {
	switch s {
	case "debug", "info", "error":
		l.value = s
		return nil
	}
	return fmt.Errorf("unsupported log level '%s', must be one of: debug, info, error", s)
}

// Entry is one controller log line, with the keys controller-runtime's
// JSON logger writes.
type Entry struct {
	Timestamp      string `json:"ts"`
	Level          string `json:"level"`
	Message        string `json:"msg"`
	Error          string `json:"error,omitempty"`
	Logger         string `json:"logger"`
	Kind           string `json:"reconciler kind,omitempty"`
	ControllerKind string `json:"controllerKind,omitempty"`
	Name           string `json:"name,omitempty"`
	Namespace      string `json:"namespace,omitempty"`
}

// Format is the flux CLI's line: "<ts> <level> <Kind>/<name>.<namespace> -
// <msg> <error>".
func (e *Entry) Format() string {
	kind := e.Kind
	if kind == "" {
		kind = e.ControllerKind
	}
	if e.Name != "" {
		kind += "/" + e.Name + "." + e.Namespace
	}
	return fmt.Sprintf("%s %s %s - %s %s\n", e.Timestamp, e.Level, kind, e.Message, e.Error)
}

// filter decides which entries are printed.
type filter struct {
	o         *options
	namespace string
	after     time.Time // zero: no lower bound (only file input; the API filters pods)
}

func (f *filter) match(e *Entry) bool {
	o := f.o
	if o.level != "" && o.level != e.Level {
		return false
	}
	if o.kind != "" && !strings.EqualFold(o.kind, e.Kind) && !strings.EqualFold(o.kind, e.ControllerKind) {
		return false
	}
	if o.name != "" && !strings.EqualFold(o.name, e.Name) {
		return false
	}
	if !o.allNamespaces && !strings.EqualFold(f.namespace, e.Namespace) {
		return false
	}
	if !f.after.IsZero() {
		if ts, err := parseTS(e.Timestamp); err == nil && ts.Before(f.after) {
			return false
		}
	}
	return true
}

// parseTS reads a ts value: ISO 8601 as weir writes it, RFC 3339, or
// seconds since the epoch (zap's default encoder).
func parseTS(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z0700", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	var secs float64
	if _, err := fmt.Sscanf(s, "%g", &secs); err == nil {
		return time.Unix(0, int64(secs*float64(time.Second))), nil
	}
	return time.Time{}, fmt.Errorf("unknown time %q", s)
}

// printer writes matching entries of several streams, a line at a time.
type printer struct {
	mu sync.Mutex
	w  io.Writer
	f  *filter
}

// copy prints the matching JSON lines read from r.
func (p *printer) copy(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		p.line(sc.Text())
	}
	return sc.Err()
}

func (p *printer) line(line string) {
	if !strings.HasPrefix(line, "{") {
		return
	}
	var e Entry
	if err := json.Unmarshal([]byte(line), &e); err != nil || !p.f.match(&e) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, e.Format())
}

func run(ctx context.Context, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps) error {
	if o.sinceTime != "" && o.since != 0 {
		return errors.New("at most one of `sinceTime` or `sinceDuration` may be specified")
	}
	var sinceTime time.Time
	if o.sinceTime != "" {
		t, err := time.Parse(time.RFC3339, o.sinceTime)
		if err != nil {
			return fmt.Errorf("%s is not a valid (RFC3339) time", o.sinceTime)
		}
		sinceTime = t
	}
	f := &filter{o: o, namespace: deps.Namespace()}
	p := &printer{w: streams.Out, f: f}
	file := o.logFile
	if file == "" {
		file = devLogFile(deps)
	}
	if file != "" {
		switch {
		case o.since != 0:
			f.after = deps.Clock().Add(-o.since)
		case !sinceTime.IsZero():
			f.after = sinceTime
		}
		if !o.follow {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, deps.Timeout)
			defer cancel()
		}
		return readFile(ctx, p, file, o, deps.Poll())
	}
	if !o.follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deps.Timeout)
		defer cancel()
	}
	return podLogs(ctx, p, o, deps, sinceTime, streams.ErrOut)
}

// devLogFile is the log `weir dev` writes, when the kubeconfig in use is
// the one it wrote beside it.
func devLogFile(deps *clideps.Deps) string {
	var paths []string
	if deps.Kube.KubeConfig != nil && *deps.Kube.KubeConfig != "" {
		paths = []string{*deps.Kube.KubeConfig}
	} else {
		paths = filepath.SplitList(os.Getenv(clientcmd.RecommendedConfigPathEnvVar))
	}
	if len(paths) != 1 {
		return ""
	}
	candidate := filepath.Join(filepath.Dir(paths[0]), DevLogFile)
	if _, err := os.Stat(candidate); err != nil {
		return ""
	}
	return candidate
}

// readFile prints the file's matching lines (the last --tail lines of it),
// then, with --follow, what is appended until ctx ends.
func readFile(ctx context.Context, p *printer, path string, o *options, poll time.Duration) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the log file: %w", err)
	}
	defer fh.Close()
	r := bufio.NewReader(fh)
	var lines []string
	var partial string
	for {
		s, err := r.ReadString('\n')
		if err == io.EOF {
			partial = s
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		lines = append(lines, strings.TrimRight(s, "\r\n"))
		if o.tail >= 0 && int64(len(lines)) > o.tail {
			lines = lines[1:]
		}
	}
	for _, l := range lines {
		p.line(l)
	}
	if !o.follow {
		if partial != "" && o.tail != 0 {
			p.line(partial)
		}
		return nil
	}
	for {
		s, err := r.ReadString('\n')
		partial += s
		switch {
		case err == nil:
			p.line(strings.TrimRight(partial, "\r\n"))
			partial = ""
			continue
		case err != io.EOF:
			return fmt.Errorf("reading %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

// podLogs reads the logs of one pod per Flux deployment of
// --flux-namespace, in parallel when following.
func podLogs(ctx context.Context, p *printer, o *options, deps *clideps.Deps, sinceTime time.Time, stderr io.Writer) error {
	cfg, err := deps.RESTConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pods, err := fluxPods(ctx, cs, o.fluxNamespace)
	if err != nil {
		return err
	}
	opts := corev1.PodLogOptions{Follow: o.follow}
	if o.tail > -1 {
		opts.TailLines = &o.tail
	}
	if !sinceTime.IsZero() {
		t := metav1.NewTime(sinceTime)
		opts.SinceTime = &t
	}
	if o.since != 0 {
		secs := int64(o.since.Round(time.Second).Seconds())
		opts.SinceSeconds = &secs
	}
	progress := output.Progress{W: stderr}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed bool
	for _, pod := range pods {
		podOpts := opts
		if len(pod.Spec.Containers) > 1 {
			podOpts.Container = controllerContainer
		}
		read := func() {
			stream, err := cs.CoreV1().Pods(o.fluxNamespace).GetLogs(pod.Name, &podOpts).Stream(ctx)
			if err == nil {
				err = p.copy(stream)
				stream.Close()
			}
			if err != nil && ctx.Err() == nil {
				mu.Lock()
				failed = true
				progress.Failuref("failed getting logs of pod %s: %v", pod.Name, err)
				mu.Unlock()
			}
		}
		if o.follow {
			wg.Add(1)
			go func() { defer wg.Done(); read() }()
		} else {
			read()
		}
	}
	wg.Wait()
	if failed {
		return errors.New("failed to collect logs from all Flux pods")
	}
	return nil
}

// fluxPods picks, for each Flux deployment of ns, one of its pods: a
// running one if there is one, the newest otherwise.
func fluxPods(ctx context.Context, cs kubernetes.Interface, ns string) ([]corev1.Pod, error) {
	deploys, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: partOfSelector})
	if err != nil {
		return nil, fmt.Errorf("listing Flux deployments in %s namespace: %w", ns, err)
	}
	var out []corev1.Pod
	for _, d := range deploys.Items {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
			LabelSelector: labels.SelectorFromSet(d.Spec.Template.Labels).String()})
		if err != nil {
			return nil, fmt.Errorf("listing the pods of deployment %s: %w", d.Name, err)
		}
		if len(pods.Items) == 0 {
			continue
		}
		items := pods.Items
		sort.SliceStable(items, func(i, j int) bool {
			ri, rj := items[i].Status.Phase == corev1.PodRunning, items[j].Status.Phase == corev1.PodRunning
			if ri != rj {
				return ri
			}
			return items[j].CreationTimestamp.Before(&items[i].CreationTimestamp)
		})
		out = append(out, items[0])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Flux pods found in namespace %q", ns)
	}
	return out, nil
}
