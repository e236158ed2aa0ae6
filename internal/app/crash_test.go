package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// controllerProcess is a weir-controller binary running as a process of
// its own, so that a test can kill it with SIGKILL.
type controllerProcess struct {
	t    *testing.T
	addr string // its storage address
	bin  string
	args []string
	env  []string
	log  string
	cmd  *exec.Cmd
}

// buildController builds cmd/weir-controller into a temporary directory.
func buildController(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weir-controller")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/weir-gitops/weir/cmd/weir-controller").CombinedOutput()
	if err != nil {
		t.Fatalf("go build weir-controller: %v\n%s", err, out)
	}
	return bin
}

// newControllerProcess prepares weir-controller, built afresh, to run the
// given --controllers against env; it is killed when the test ends, and
// the end of its log is printed when the test failed.
func newControllerProcess(t *testing.T, env *testenv.Env, controllers string) *controllerProcess {
	t.Helper()
	return newControllerProcessOf(t, env, buildController(t), controllers)
}

// newControllerProcessOf is newControllerProcess with a binary already
// built, for tests that run several processes.
func newControllerProcessOf(t *testing.T, env *testenv.Env, bin, controllers string) *controllerProcess {
	t.Helper()
	addr := freeAddr(t)
	p := &controllerProcess{
		t: t, addr: addr, bin: bin, log: filepath.Join(t.TempDir(), "controller.log"),
		env: append(os.Environ(), "KUBECONFIG="+env.ControlPlane.KubeconfigPath()),
		args: []string{"--controllers=" + controllers, "--enable-leader-election=false",
			"--metrics-addr=0", "--health-addr=0",
			"--storage-path=" + t.TempDir(), "--storage-addr=" + addr, "--storage-adv-addr=" + addr},
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			if b, err := os.ReadFile(p.log); err == nil {
				t.Logf("weir-controller log (end):\n%s", tail(b, 4000))
			}
		}
	})
	return p
}

func (p *controllerProcess) start() {
	p.t.Helper()
	logFile, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	defer logFile.Close()
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = p.env, logFile, logFile
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("starting weir-controller: %v", err)
	}
}

// kill sends SIGKILL to the process (by its PID) and reaps it.
func (p *controllerProcess) kill() {
	p.t.Helper()
	if p.cmd == nil {
		return
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		p.t.Errorf("kill -9 %d: %v", p.cmd.Process.Pid, err)
	}
	_ = p.cmd.Wait()
	p.cmd = nil
}

// TestKilledDuringFirstApplyThenDeletedPrunesEverything runs weir-controller
// as a process, kills it with SIGKILL while the first apply of a prune:true
// Kustomization of many ConfigMaps is writing them, deletes the
// Kustomization, and starts the controller again: the finalizer (stored
// before any work) keeps the Kustomization until the controller is back,
// and the inventory (recorded before the stage wrote) names every
// ConfigMap the killed process created, so none is left.
func TestKilledDuringFirstApplyThenDeletedPrunesEverything(t *testing.T) {
	const count = 1500
	env := testenv.Get(t)
	ns := env.Namespace(t)
	p := newControllerProcess(t, env, "source,kustomize")
	p.start()

	ks := configMapsKustomization(t, env, ns, count, 5*time.Minute)
	key := client.ObjectKeyFromObject(ks)

	var atKill int
	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(context.Context) (bool, string) {
		atKill = env.OwnedConfigMaps(t, ns, key)
		return atKill > 0, "no ConfigMap applied yet"
	})
	p.kill()
	atKill = env.OwnedConfigMaps(t, ns, key)
	t.Logf("%d of %d ConfigMaps in the cluster when weir-controller was killed", atKill, count)

	ctx := context.Background()
	if err := env.Client.Get(ctx, key, ks); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(ks, meta.Finalizer) {
		t.Fatalf("no finalizer on the Kustomization after its first reconcile began: %v", ks.Finalizers)
	}
	if ks.Status.Inventory == nil {
		t.Fatal("no inventory while the first apply was writing")
	}
	if n := len(ks.Status.Inventory.Entries); n != count {
		t.Errorf("inventory holds %d entries before the stage completed, want the %d it was writing", n, count)
	}
	if err := env.Client.Delete(ctx, ks); err != nil {
		t.Fatal(err)
	}
	p.start()
	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, key, &kustomizev1.Kustomization{})
		return apierrors.IsNotFound(err), "Kustomization still there"
	})
	if left := env.OwnedConfigMaps(t, ns, key); left != 0 {
		t.Errorf("%d ConfigMaps left after the deletion, want 0 (%d existed at the kill)", left, atKill)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
