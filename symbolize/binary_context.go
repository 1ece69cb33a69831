package symbolize

import "context"

// OpenBinaryContext is OpenBinary that gives up when ctx is done: it
// returns ctx.Err() at once, and a Binary whose opening completes after
// that is closed. Opening maps the file and reads its headers, symbol
// table and debug-file links; DWARF is read later, lazily, by lookups.
func OpenBinaryContext(ctx context.Context, path string, opts BinaryOptions) (*Binary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return OpenBinary(path, opts)
	}
	type opened struct {
		b   *Binary
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		b, err := OpenBinary(path, opts)
		ch <- opened{b, err}
	}()
	select {
	case o := <-ch:
		return o.b, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.b != nil {
				o.b.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
