package pipeline

import (
	"context"
	"errors"
	"io"
	"sync"
)

// resultWindow is how many Results one input may have ready ahead of the
// consumer when inputs are read in parallel (Options.Jobs): with Jobs
// inputs in flight at most Jobs×resultWindow Results are held, however
// many inputs and incidents the run has.
const resultWindow = 64

// runItem is one value yielded by an input's iterator.
type runItem struct {
	r   *Result
	err error
}

// runParallel is Run reading up to jobs inputs at once. Each input's
// Results go to a channel of its own holding at most resultWindow; the
// consumer drains the channels in input order, so the sequence is the
// one Run yields with one job. A new input is started only when fewer
// than jobs inputs are started and not yet drained by the consumer, which
// bounds memory; a reader blocked on a full channel waits for its turn.
func (p *Pipeline) runParallel(ctx context.Context, stdin io.Reader, jobs int, paths []string, yield func(*Result, error) bool) {
	inner, cancel := context.WithCancel(ctx)
	left := make(chan struct{}) // closed when the consumer is done
	var wg sync.WaitGroup
	defer func() {
		cancel()
		close(left)
		wg.Wait()
	}()
	sem := make(chan struct{}, jobs)       // one token per input started and not yet drained
	queue := make(chan chan runItem, jobs) // the inputs' channels, in input order
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(queue)
		for name, err := range Files(inner, paths...) {
			select {
			case sem <- struct{}{}:
			case <-inner.Done():
				return
			}
			ch := make(chan runItem, resultWindow)
			select {
			case queue <- ch:
			case <-inner.Done():
				return
			}
			if err != nil {
				ch <- runItem{err: err}
				close(ch)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(ch)
				// A context that can be done makes the scanner of a pipe
				// or stream (not of a file: ScanOptions.NonBlocking) read
				// in a goroutine of its own, which costs CPU: when the caller's
				// cannot be done, the scan gets it, and a consumer that
				// leaves stops the scan at its next Result instead.
				sctx := inner
				if ctx.Done() == nil {
					sctx = ctx
				}
				seq := p.named(sctx, name, stdin)
				// Delivered until the consumer leaves: once the caller's
				// context is done the input still hands out the incident
				// it had open, then the context's error, and ends.
				for r, err := range seq {
					select {
					case ch <- runItem{r, err}:
					case <-left:
						return
					}
				}
			}()
		}
	}()
	for ch := range queue {
		ctxErrYielded := false
		for it := range ch {
			if !yield(it.r, it.err) {
				return
			}
			if it.err != nil && ctx.Err() != nil && errors.Is(it.err, ctx.Err()) {
				ctxErrYielded = true
			}
		}
		<-sem
		if err := ctx.Err(); err != nil {
			// As Run: the context's error comes last (the reader may
			// have left before delivering it).
			if !ctxErrYielded {
				yield(nil, err)
			}
			return
		}
	}
	if err := ctx.Err(); err != nil {
		// The walk stopped with nothing left to read.
		yield(nil, err)
	}
}
