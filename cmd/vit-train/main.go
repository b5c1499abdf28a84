// Command vit-train trains, evaluates and inspects Vision Transformers.
//
//	vit-train train                      # the default job: a small ViT on the embedded Fashion-MNIST subset
//	vit-train models                     # list the presets
//	vit-train info --model vit_base_patch16_224
//	vit-train bench --model vit_cifar_patch4_32 --batch 64
//
// Exit status: 0 on success; 130 after SIGINT (Ctrl-C) and 143 after
// SIGTERM, once train, finetune or eval has stopped (train and finetune
// save a checkpoint first), as a shell reports a process killed by the
// signal; 1 on any error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	// The architectures the command knows, registered with package model
	// as database/sql drivers are: what models lists, train builds and a
	// checkpoint's "vit_train.arch" may name.
	_ "github.com/vit-train/vit-train/model/resnet"
	_ "github.com/vit-train/vit-train/model/vit"
)

func main() {
	err := newRootCommand().Execute()
	if err == nil {
		return
	}
	var q *quietError
	if !errors.As(err, &q) {
		fmt.Fprintln(os.Stderr, "vit-train:", err)
	}
	os.Exit(exitCode(err))
}

// quietError ends the process with err's exit status without printing it:
// the outcome of a rank other than 0 of a data-parallel job that was
// interrupted, which rank 0 reports.
type quietError struct{ err error }

func (e *quietError) Error() string { return e.err.Error() }
func (e *quietError) Unwrap() error { return e.err }

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "vit-train",
		Short:         "Train Vision Transformers (ViT, DeiT) in Go",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newTrainCommand(), newFinetuneCommand(), newEvalCommand(), newPredictCommand(), newModelsCommand(), newInfoCommand(), newBenchCommand(), newPlotCommand(), newAttentionCommand(), newPosEmbedCommand(), newImportCommand(), newExportCommand(), newLogitsCommand(), newPrepareCommand())
	return root
}

// exitCode is the process's exit status for an error: 128+N for a command
// stopped by signal N (130 for SIGINT, 143 for SIGTERM), 1 otherwise.
func exitCode(err error) int {
	var s *signalError
	if errors.As(err, &s) {
		return 128 + int(s.sig)
	}
	return 1
}

// signalError is a command that stopped early because of a signal.
type signalError struct {
	sig syscall.Signal
	msg string // what happened and what to do next
}

func (e *signalError) Error() string { return fmt.Sprintf("%s (%s)", e.msg, signalName(e.sig)) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// signals turns the first SIGINT or SIGTERM into the cancellation of a
// context, so that a command can stop cleanly (a training run at the end of
// its optimiser step, with a checkpoint).
type signals struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	done   chan struct{}
	got    atomic.Int32
}

// catchSignals starts catching SIGINT and SIGTERM; what says what the
// command does on the first (printed to w). After the first, the default
// action is restored: a second signal ends the process at once.
func catchSignals(w io.Writer, what string) *signals {
	s := &signals{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	signal.Notify(s.ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.ch:
			signal.Stop(s.ch)
			if ss, ok := sig.(syscall.Signal); ok {
				s.got.Store(int32(ss))
			}
			fmt.Fprintf(w, "\n%s: %s (send it again to quit at once)\n", signalName(syscall.Signal(s.got.Load())), what)
			s.cancel()
		case <-s.done:
		}
	}()
	return s
}

// caught is the signal that cancelled the context, 0 if none did.
func (s *signals) caught() syscall.Signal { return syscall.Signal(s.got.Load()) }

// stop stops catching signals.
func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
	s.cancel()
}
