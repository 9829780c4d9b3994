//! The non-blocking writer behind cvo's log files: the dashboard's (`ui::logging`) and the
//! operator's `--log-dir` files (`cli::operator::logs`). Lines are queued for a writer thread
//! (`tracing_appender::non_blocking`), so a slow disk never stalls the engine or a redraw.

/// How many log lines a file logger queues for its writer thread before it drops lines
/// (lossy, as `tracing_appender`'s default). The default queue, 128,000 lines, is allocated and
/// initialised up front: 4.1 MB of a demo's or operator's resident memory spent on an empty
/// queue. 4,096 lines (about 160 KB) absorb any burst cvo logs.
pub const FILE_LOG_QUEUE_LINES: usize = 4096;

/// A non-blocking writer for a log file, its queue bounded at [`FILE_LOG_QUEUE_LINES`]. Keep
/// the guard alive until exit: dropping it flushes and stops the writer thread.
pub fn file_writer<W: std::io::Write + Send + 'static>(
    file: W,
) -> (
    tracing_appender::non_blocking::NonBlocking,
    tracing_appender::non_blocking::WorkerGuard,
) {
    tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(FILE_LOG_QUEUE_LINES)
        .finish(file)
}
