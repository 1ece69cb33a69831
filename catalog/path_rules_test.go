package catalog

import (
	"strings"
	"testing"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// framesNamed is a stack of frames with these function names, innermost
// first (the cases below are call chains the sources make).
func framesNamed(names ...string) []symbolize.Frame {
	out := make([]symbolize.Frame, len(names))
	for i, n := range names {
		out[i] = symbolize.Frame{Function: n}
	}
	return out
}

// TestDefaultPathRulesFromSources checks the default path rules on stacks
// built from the backends' sources (be-code-paths.md and the files named in
// each rule's why), not from any crash text: each case is a call chain the
// source code makes, innermost first.
func TestDefaultPathRulesFromSources(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	cases := []struct {
		name   string
		query  string
		frames []symbolize.Frame
		path   Path
		area   string
	}{
		{"http worker lambda runs the stream-load handler", "",
			framesNamed("doris::StreamLoadAction::on_header(doris::HttpRequest*)", "doris::EvHttpServer::on_header(evhttp_request*)", "evhttp_read_header", "event_base_loop",
				"doris::EvHttpServer::start()::{lambda()#1}::operator()() const", "doris::ThreadPool::dispatch_thread()"),
			PathLoad, "ingestion"},
		{"http worker lambda with nothing placeable above it is the worker's setup", "",
			framesNamed("std::vector<int>::_M_realloc_insert(int const&)", "starrocks::EvHttpServer::start()::{lambda()#1}::operator()() const", "execute_native_thread_routine"),
			PathLifecycle, "startup"},
		{"the start frame itself is startup", "",
			framesNamed("starrocks::EvHttpServer::start()", "starrocks::start_be(std::vector<starrocks::StorePath> const&, bool)"),
			PathLifecycle, ""},
		{"a daemon thread body started by Daemon::start is the daemon's", "",
			framesNamed("doris::MemInfo::refresh_proc_meminfo()", "doris::Daemon::start()::{lambda()#2}::operator()() const", "doris::Thread::supervise_thread(void*)"),
			PathBackground, "daemon"},
		{"a scan executor's task queue is scan work", "1-2",
			framesNamed("starrocks::workgroup::WorkGroupScanTaskQueue::take()", "starrocks::workgroup::ScanExecutor::worker_thread()", "starrocks::ThreadPool::dispatch_thread()"),
			PathScan, "scan-executor"},
		{"spill IO on a scan executor is the spill's", "1-2",
			framesNamed("starrocks::spill::SpillerWriter::flush()", "starrocks::workgroup::ScanExecutor::worker_thread()", "starrocks::ThreadPool::dispatch_thread()"),
			PathQuery, "spill"},
		{"the pipeline driver queue stays query", "1-2",
			framesNamed("starrocks::workgroup::WorkGroupDriverQueue::take(bool)", "starrocks::pipeline::GlobalDriverExecutor::_worker_thread()"),
			PathQuery, "pipeline"},
		{"a load's plan is built under the stream-load executor", "1-2",
			framesNamed("doris::ExecNode::init(doris::TPlanNode const&, doris::RuntimeState*)", "doris::ExecNode::create_tree(doris::RuntimeState*)", "doris::PlanFragmentExecutor::prepare(doris::TExecPlanFragmentParams const&)",
				"doris::FragmentMgr::exec_plan_fragment(doris::TExecPlanFragmentParams const&)", "doris::StreamLoadExecutor::execute_plan_fragment(std::shared_ptr<doris::StreamLoadContext>)"),
			PathLoad, "ingestion"},
		{"a query's plan is query", "1-2",
			framesNamed("doris::OlapScanNode::init(doris::TPlanNode const&, doris::RuntimeState*)", "doris::ExecNode::create_tree(doris::RuntimeState*)", "doris::FragmentMgr::exec_plan_fragment(doris::TExecPlanFragmentParams const&)"),
			PathQuery, "plan-prepare"},
		{"librdkafka serves routine load only", "",
			[]symbolize.Frame{{Function: "rd_kafka_cgrp_serve"}, {Function: "rd_kafka_thread_main", Module: "/opt/doris/be/lib/doris_be"}},
			PathLoad, "routine-load"},
		{"agent tasks arrive through thrift submit_tasks", "",
			framesNamed("starrocks::TAgentTaskRequest::read(apache::thrift::protocol::TProtocol*)", "starrocks::BackendService_submit_tasks_args::read(apache::thrift::protocol::TProtocol*)",
				"starrocks::BackendServiceProcessor::process_submit_tasks(int, apache::thrift::protocol::TProtocol*, apache::thrift::protocol::TProtocol*, void*)"),
			PathBackground, "agent-task"},
		{"StarRocks arrow reads serve the load ParquetScanner", "",
			framesNamed("arrow::ListArray::value_offset(long) const", "parquet::arrow::FileReaderImpl::ReadColumn(int, std::shared_ptr<arrow::ChunkedArray>*)", "starrocks::ParquetChunkReader::next_batch(arrow::RecordBatch**)"),
			PathLoad, ""},
		{"arrow frames under a StarRocks product frame lean to load", "",
			framesNamed("arrow::ListArray::value_offset(long) const", "starrocks::ChunkHelper::new_chunk(starrocks::Schema const&, unsigned long)"),
			PathLoad, "parquet"},
		{"the native reader of an external table is scan", "1-2",
			framesNamed("starrocks::parquet::GroupReader::get_next(starrocks::ChunkPtr*, unsigned long*)", "starrocks::HdfsParquetScanner::do_get_next(starrocks::RuntimeState*, starrocks::ChunkPtr*)"),
			PathScan, ""},
		{"segcompaction belongs to the load that writes the rowset", "",
			framesNamed("doris::Merger::vertical_compact_one_group(doris::BaseTabletSPtr)", "doris::SegcompactionWorker::_do_compact_segments(std::unique_ptr<doris::SegCompactionCandidates>)", "doris::SegcompactionWorker::compact_segments(std::unique_ptr<doris::SegCompactionCandidates>)"),
			PathLoad, "segcompaction"},
		{"morsel queues split a scan's ranges", "1-2",
			framesNamed("starrocks::pipeline::PhysicalSplitMorselQueue::try_get()", "starrocks::pipeline::PipelineDriver::process(starrocks::RuntimeState*, int)"),
			PathScan, "scan-operator"},
		{"JVMFunctionHelper is the JVM for any JNI user: the scanner decides", "1-2",
			framesNamed("starrocks::JVMFunctionHelper::getInstance()", "starrocks::JniScanner::do_open(starrocks::RuntimeState*)", "starrocks::HdfsScanner::open(starrocks::RuntimeState*)"),
			PathScan, ""},
		{"an HDFS write under a writable file is not a scan", "",
			framesNamed("jni_CallVoidMethod", "hdfsHFlush", "starrocks::HdfsWritableFile::flush(starrocks::WritableFile::FlushMode)", "starrocks::lake::TabletManager::put_tablet_metadata(starrocks::TabletMetadataPB const&)"),
			PathBackground, "storage"},
		{"a process singleton's destructor runs only at shutdown", "",
			framesNamed("doris::LRUCache::~LRUCache()", "doris::StoragePageCache::~StoragePageCache()", "std::default_delete<doris::StoragePageCache>::operator()(doris::StoragePageCache*) const"),
			PathLifecycle, "shutdown"},
		{"Doris after the 2026-03 refactor: a JSON load reader without vectorized::", "1-2",
			framesNamed("doris::NewJsonReader::_simdjson_handle_flat_array_complex_json(doris::RuntimeState*, doris::Block&, bool*, bool*)", "doris::FileScanner::_get_block_impl(doris::RuntimeState*, doris::Block*, bool*)"),
			PathLoad, "text-format"},
		{"Doris after the 2026-03 refactor: block ops without vectorized:: are weak leaves", "0-0",
			framesNamed("doris::Block::get_by_position(unsigned long)"),
			PathBackground, "storage-read"},
		{"Doris after the 2026-03 refactor: a new-layout source path places an unnamed frame", "",
			[]symbolize.Frame{{Function: "??", File: "/root/doris/be/src/exec/sink/writer/vtablet_writer.cpp", Line: 120}},
			PathLoad, "ingestion"},
		{"aggregate functions with no task attached merge rows for a compaction", "0-0",
			framesNamed("doris::vectorized::AggregateFunctionCollectSetData<int>::merge(doris::vectorized::AggregateFunctionCollectSetData<int> const&)"),
			PathBackground, "storage-merge"},
		{"aggregate functions with a query attached are query", "1-2",
			framesNamed("doris::vectorized::AggregateFunctionCollectSetData<int>::merge(doris::vectorized::AggregateFunctionCollectSetData<int> const&)"),
			PathQuery, "aggregation"},
		{"the file cache's TTL GC thread is background", "",
			framesNamed("doris::io::BlockFileCache::remove_if_ttl_file_blocks(doris::UInt128Wrapper const&, bool, std::lock_guard<std::mutex>&, bool)", "doris::io::BlockFileCache::run_background_ttl_gc()", "execute_native_thread_routine"),
			PathBackground, "daemon"},
		{"the file cache's LRU-update thread drains the need-update queue", "",
			framesNamed("doris::io::BlockFileCache::update_block_lru(std::shared_ptr<doris::io::FileBlock>, std::lock_guard<std::mutex>&)", "doris::io::BlockFileCache::run_background_block_lru_update()"),
			PathBackground, "daemon"},
		{"the file cache read path is the scan's", "1-2",
			framesNamed("doris::io::BlockFileCache::get_or_set(doris::UInt128Wrapper const&, unsigned long, unsigned long, doris::io::CacheContext&)", "doris::io::CachedRemoteFileReader::read_at_impl(unsigned long, doris::Slice, unsigned long*, doris::io::IOContext const*)"),
			PathScan, "remote-io"},
		{"an existing file cache directory is loaded when the cache opens", "",
			framesNamed("doris::io::FSFileCacheStorage::load_cache_info_into_memory_from_fs(doris::io::BlockFileCache*) const", "doris::io::FSFileCacheStorage::load_cache_info_into_memory(doris::io::BlockFileCache*) const",
				"doris::io::FSFileCacheStorage::init(doris::io::BlockFileCache*)::{lambda()#1}::operator()() const", "execute_native_thread_routine"),
			PathLifecycle, "startup"},
		{"the file cache opens from ExecEnv's init", "",
			framesNamed("doris::io::BlockFileCache::initialize()", "doris::io::FileCacheFactory::create_file_cache(std::string const&, doris::io::FileCacheSettings)", "doris::ExecEnv::init_file_cache_factory(std::vector<doris::CachePath>&)"),
			PathLifecycle, "startup"},
		{"a thread-local destructor at thread exit is the thread's teardown", "",
			framesNamed("starrocks::CurrentThread::~CurrentThread()", "__nptl_deallocate_tsd", "start_thread", "clone"),
			PathLifecycle, "thread-exit"},
		{"a rowset builder's delete bitmap between its segments is the load's", "1-2",
			framesNamed("doris::MergeIndexDeleteBitmapCalculator::calculate_all(std::shared_ptr<doris::DeleteBitmap>)", "doris::BaseTablet::calc_delete_bitmap_between_segments(std::shared_ptr<doris::Rowset>, std::vector<std::shared_ptr<doris::segment_v2::Segment>> const&, std::shared_ptr<doris::DeleteBitmap>)",
				"doris::BaseRowsetBuilder::build_rowset()"),
			PathLoad, ""},
		{"the cloud publish task's recomputation of it is background", "0-0",
			framesNamed("doris::MergeIndexDeleteBitmapCalculator::calculate_all(std::shared_ptr<doris::DeleteBitmap>)", "doris::BaseTablet::calc_delete_bitmap_between_segments(std::shared_ptr<doris::TabletSchema>, doris::RowsetId const&, std::vector<std::shared_ptr<doris::segment_v2::Segment>> const&, std::shared_ptr<doris::DeleteBitmap>, long)",
				"doris::CloudTabletCalcDeleteBitmapTask::handle() const"),
			PathBackground, "agent-task"},
		{"the runtime scan-range pruner builds storage predicates of the OLAP scan", "1-2",
			framesNamed("starrocks::detail::RuntimeColumnPredicateBuilder::operator()<(starrocks::LogicalType)17>(starrocks::ColumnIdToGlobalDictMap const*, starrocks::PredicateParser*, starrocks::RuntimeFilterProbeDescriptor const*, starrocks::SlotDescriptor const*, int, starrocks::ObjectPool*)",
				"starrocks::OlapRuntimeScanRangePruner::_update(starrocks::ColumnIdToGlobalDictMap const*, std::function<starrocks::Status (unsigned int, std::vector<starrocks::ColumnPredicate const*, std::allocator<starrocks::ColumnPredicate const*> > const&)>&&, unsigned long)"),
			PathScan, "segment-read"},
		{"an Iceberg table reader wraps the parquet reader of an external-table query", "1-2",
			framesNamed("doris::vectorized::IcebergTableReader::_position_delete_base(std::string const&, std::vector<doris::TIcebergDeleteFileDesc> const&)", "doris::vectorized::IcebergParquetReader::init_reader(std::vector<std::string> const&)"),
			PathScan, "table-format"},
		{"Doris' native parquet column readers are the parquet scan", "1-2",
			framesNamed("doris::vectorized::ScalarColumnReader::read_column_data(doris::vectorized::COW<doris::vectorized::IColumn>::immutable_ptr<doris::vectorized::IColumn>&)"),
			PathScan, "parquet"},
		{"a row fetch for top-N lazy materialisation reads rows by id", "1-2",
			framesNamed("doris::RowIdStorageReader::read_by_rowids(doris::PMultiGetRequestV2 const&, doris::PMultiGetResponseV2*)", "doris::PInternalService::multiget_data_v2(google::protobuf::RpcController*, doris::PMultiGetRequestV2 const*, doris::PMultiGetResponseV2*, google::protobuf::Closure*)"),
			PathScan, ""},
		{"a cloud load commits its rowset through the meta service", "1-2",
			framesNamed("doris::cloud::CloudMetaMgr::commit_rowset(doris::RowsetMeta&, std::string const&, std::shared_ptr<doris::RowsetMeta>*)", "doris::CloudRowsetBuilder::build_rowset()"),
			PathLoad, "ingestion"},
		{"a cloud compaction's rowset commit is the compaction's", "0-0",
			framesNamed("doris::cloud::CloudMetaMgr::commit_rowset(doris::RowsetMeta&, std::string const&, std::shared_ptr<doris::RowsetMeta>*)", "doris::CloudCompactionMixin::execute_compact_impl(long)"),
			PathBackground, "compaction"},
		{"brpc's bvar sampler thread samples metrics", "1-2",
			framesNamed("bvar::detail::WindowBase<bvar::Adder<long>, (bvar::SeriesFrequency)0>::SeriesSampler::take_sample()", "bvar::detail::SamplerCollector::run()", "bvar::detail::SamplerCollector::sampling_thread(void*)"),
			PathBackground, "daemon"},
		{"a primary-key index build reads segments for apply, not for a scan", "",
			framesNamed("starrocks::ColumnReader::read_page(starrocks::ColumnIteratorOptions const&, starrocks::PagePointer const&, starrocks::PageHandle*, starrocks::Slice*, starrocks::PageFooterPB*)", "starrocks::SegmentIterator::do_get_next(starrocks::Chunk*)",
				"starrocks::PrimaryIndex::_do_load(starrocks::Tablet*)", "starrocks::PrimaryIndex::load(starrocks::Tablet*)", "starrocks::TabletUpdates::_do_update(unsigned int, long, long)"),
			PathBackground, ""},
		{"a shared-data primary-key index is loaded at publish", "",
			framesNamed("starrocks::Segment::_open(unsigned long*, starrocks::FooterPointerPB const*, starrocks::LakeIOOptions const&)", "starrocks::lake::LakePrimaryIndex::lake_load(starrocks::lake::TabletManager*, std::shared_ptr<starrocks::TabletMetadataPB const> const&, long, starrocks::lake::MetaFileBuilder const*)",
				"starrocks::lake::UpdateManager::prepare_primary_index(starrocks::TabletMetadataPB const&, starrocks::lake::MetaFileBuilder*, starrocks::IndexEntry*, long, long)"),
			PathBackground, "pk-index"},
		{"libc's per-thread free at thread exit is the thread's teardown", "",
			framesNamed("je_tsd_fetch_slow", "jemalloc_usable_size", "my_free", "__libc_thread_freeres", "start_thread"),
			PathLifecycle, "thread-exit"},
		{"starting a legacy FileScanNode's scanner threads is the load scan (the node is only a template argument)", "1-2",
			framesNamed("std::vector<std::thread, std::allocator<std::thread> >::_M_realloc_insert<void (starrocks::vectorized::FileScanNode::*)(int, int), starrocks::vectorized::FileScanNode*, int, unsigned long>(__gnu_cxx::__normal_iterator<std::thread*, std::vector<std::thread> >, void (starrocks::vectorized::FileScanNode::*&&)(int, int), starrocks::vectorized::FileScanNode*&&, int&&, unsigned long&&)"),
			PathLoad, "load-scan"},
		{"the StarOSWorker's own lock faulting: g_worker is gone (shutdown_staros_worker)", "",
			framesNamed("pthread_rwlock_rdlock", "starrocks::StarOSWorker::get_shard_filesystem(unsigned long, std::unordered_map<std::string, std::string> const&)", "starrocks::StarletFileSystem::new_writable_file(starrocks::WritableFileOptions const&, std::string const&)"),
			PathLifecycle, "shutdown"},
		{"starlet's heartbeat reads shard infos from the worker", "",
			framesNamed("staros::FilePathInfo::FilePathInfo(staros::FilePathInfo const&)", "starrocks::StarOSWorker::get_shard_info(unsigned long) const", "staros::starlet::StarMgrClient::worker_heartbeat()"),
			PathBackground, "starlet-worker"},
		{"a StarOSWorker method with nothing visible below it is starlet's call", "",
			framesNamed("staros::S3FileStoreInfo::S3FileStoreInfo(staros::S3FileStoreInfo const&)", "starrocks::StarOSWorker::get_shard_info(unsigned long) const"),
			PathBackground, "starlet-worker"},
		{"a flat-JSON merge writing a compaction's output is the compaction", "0-0",
			framesNamed("starrocks::JsonMerger::merge(std::vector<starrocks::ColumnPtr> const&)", "starrocks::FlatJsonColumnCompactor::_merge_columns(std::vector<starrocks::ColumnPtr>&)", "starrocks::FlatJsonColumnCompactor::finish()"),
			PathBackground, "compaction"},
		{"the vertical compaction's rowset writer writes a compaction's output (Doris), templated or not", "",
			framesNamed("doris::segment_v2::SegmentWriter::finalize_columns_index(unsigned long*)", "doris::VerticalBetaRowsetWriter<doris::BetaRowsetWriter>::_flush_columns(doris::segment_v2::SegmentWriter*, bool)"),
			PathBackground, "compaction"},
		{"the vertical compaction's rowset writer, older non-template name", "",
			framesNamed("doris::segment_v2::ScalarColumnWriter::write_inverted_index()", "doris::VerticalBetaRowsetWriter::flush_columns(bool)"),
			PathBackground, "compaction"},
		{"the segment writer of a load's vertical segment writer stays load", "",
			framesNamed("doris::segment_v2::ScalarColumnWriter::write_inverted_index()", "doris::segment_v2::VerticalSegmentWriter::finalize_columns_index(unsigned long*)", "doris::BetaRowsetWriter::flush_memtable(doris::vectorized::Block*, int, long*)"),
			PathLoad, ""},
		{"a scan operator's chunk buffer limiter is the scan's (StarRocks)", "1-2",
			framesNamed("operator new(unsigned long)", "starrocks::pipeline::DynamicChunkBufferLimiter::pin(int)"),
			PathScan, "scan-operator"},
		{"the write half of TableConnector is an INSERT into an external table (Doris)", "1-2",
			framesNamed("doris::vectorized::DataTypeNullable::to_string(doris::vectorized::IColumn const&, unsigned long) const", "doris::TableConnector::convert_column_data(COW<doris::vectorized::IColumn>::immutable_ptr<doris::vectorized::IColumn> const&, std::shared_ptr<doris::vectorized::IDataType const> const&, doris::TypeDescriptor const&, int, doris::TOdbcTableType::type)", "doris::TableConnector::append(std::string const&, doris::vectorized::Block*, std::vector<doris::vectorized::VExprContext*> const&, unsigned int, unsigned int*, doris::TOdbcTableType::type)"),
			PathLoad, "sink"},
		{"the read half of a JDBC connector stays a scan (Doris)", "1-2",
			framesNamed("doris::JdbcConnector::get_next(bool*, std::vector<COW<doris::vectorized::IColumn>::mutable_ptr<doris::vectorized::IColumn>>&, int)", "doris::vectorized::NewJdbcScanner::_get_block_impl(doris::RuntimeState*, doris::vectorized::Block*, bool*)"),
			PathScan, ""},
		{"an Arrow Flight DoGet streams a query's results: arrow frames under it are not a file read", "",
			framesNamed("arrow::Schema::fields() const", "arrow::ipc::DictionaryFieldMapper::DictionaryFieldMapper(arrow::Schema const&)", "arrow::flight::RecordBatchStream::RecordBatchStream(std::shared_ptr<arrow::RecordBatchReader>, arrow::ipc::IpcWriteOptions const&)"),
			PathQuery, "result"},
		{"an arrow reader without Flight above it stays the Parquet scan", "",
			framesNamed("arrow::Schema::fields() const", "parquet::arrow::FileReaderImpl::GetSchema(std::shared_ptr<arrow::Schema>*)"),
			PathScan, "parquet"},
		{"ExecEnv::destroy stops FragmentMgr (Doris): a cut stack is still teardown", "0-0",
			framesNamed("doris::ThreadPool::shutdown()", "doris::FragmentMgr::stop()"),
			PathLifecycle, "shutdown"},
		{"ExecEnv::stop closes the load channels (StarRocks): teardown, not ingestion", "",
			framesNamed("starrocks::LoadChannel::cancel()", "starrocks::LoadChannelMgr::close()"),
			PathLifecycle, "shutdown"},
		{"starlet's shutdown hooks run in shutdown_staros_worker", "",
			framesNamed("staros::starlet::common::ShutdownHook::shutdown()", "starrocks::shutdown_staros_worker()", "starrocks::start_be(std::vector<starrocks::StorePath> const&, bool)"),
			PathLifecycle, "shutdown"},
		// A source audit of 2026-12-02 (CATALOG.md, round 9): subsystems the rules
		// left unplaced or put on another path than the sources say.
		// P1 load-push-task
		{"a PUSH task (spark load, DELETE predicate) is a load although an agent worker runs it", "",
			framesNamed("doris::PushHandler::process_streaming_ingestion(std::shared_ptr<doris::Tablet>, doris::TPushReq const&, doris::PushType, std::vector<doris::TTabletInfo>*)", "doris::EngineBatchLoadTask::_push(doris::TPushReq const&, std::vector<doris::TTabletInfo>*)", "doris::EngineBatchLoadTask::execute()", "doris::push_callback(doris::StorageEngine&, doris::TAgentTaskRequest const&)", "doris::AgentServer::start_workers(doris::StorageEngine&, doris::ExecEnv*)::{lambda(auto:1&&)#8}::operator()<doris::TAgentTaskRequest const&>(doris::TAgentTaskRequest const&) const", "doris::PriorTaskWorkerPool::normal_loop()", "doris::Thread::supervise_thread(void*)"),
			PathLoad, "push"},
		{"StarRocks' push worker runs EngineBatchLoadTask through execute_task: load", "",
			framesNamed("starrocks::PushHandler::process_streaming_ingestion(std::shared_ptr<starrocks::Tablet> const&, starrocks::TPushReq const&, starrocks::PushType, std::vector<starrocks::TTabletInfo>*)", "starrocks::EngineBatchLoadTask::_push(starrocks::TPushReq const&, std::vector<starrocks::TTabletInfo>*)", "starrocks::EngineBatchLoadTask::execute()", "starrocks::StorageEngine::execute_task(starrocks::EngineTask*)", "starrocks::PushTaskWorkerPool::_worker_thread_callback(void*)", "starrocks::Thread::supervise_thread(void*)"),
			PathLoad, "push"},
		// P2 background-agent-task: only the agent's own callbacks
		{"a tablet sink's add_block RPC callback is the load's, not an agent task", "",
			framesNamed("doris::vectorized::VNodeChannel::_add_block_success_callback(doris::PTabletWriterAddBlockResult const&, doris::vectorized::WriteBlockCallbackContext const&)", "doris::vectorized::WriteBlockCallback<doris::PTabletWriterAddBlockResult>::call()", "brpc::Controller::EndRPC(brpc::Controller::CompletionInfo const&)", "brpc::Controller::OnVersionedRPCReturned(brpc::Controller::CompletionInfo const&, bool, int)", "bthread::TaskGroup::task_runner(long)"),
			PathLoad, "ingestion"},
		{"a fragment's status report to the coordinator is query bookkeeping, not an agent task", "1-2",
			framesNamed("doris::FragmentMgr::coordinator_callback(doris::ReportStatusRequest const&)", "doris::PlanFragmentExecutor::send_report(bool)", "doris::PlanFragmentExecutor::report_profile()", "doris::ThreadPool::dispatch_thread()"),
			PathQuery, "fragment"},
		{"an agent task callback stays an agent task", "",
			framesNamed("doris::TabletManager::drop_tablet(long, long, bool)", "doris::drop_tablet_callback(doris::StorageEngine&, doris::TAgentTaskRequest const&)", "doris::TaskWorkerPool::_handle_task(doris::TAgentTaskRequest const&)"),
			PathBackground, "agent-task"},
		{"the publish worker pool's callback stays an agent task", "",
			framesNamed("doris::PublishVersionWorkerPool::publish_version_callback(doris::TAgentTaskRequest const&)", "doris::TaskWorkerPool::_handle_task(doris::TAgentTaskRequest const&)", "doris::ThreadPool::dispatch_thread()"),
			PathBackground, "agent-task"},
		// P9 background-daemon: StarRocks datacache space monitors and gc_memory
		{"StarRocks' disk-cache space monitor thread is a daemon", "",
			framesNamed("starrocks::DiskSpaceMonitor::_update_cache_quota(std::vector<starrocks::DirSpace> const&)", "starrocks::DiskSpaceMonitor::_adjust_datacache_callback()", "starrocks::DiskSpaceMonitor::start()::{lambda()#1}::operator()() const", "execute_native_thread_routine"),
			PathBackground, "daemon"},
		{"StarRocks' memory-cache space monitor evicts on its own thread", "",
			framesNamed("starrocks::MemSpaceMonitor::_evict_datacache(long)", "starrocks::MemSpaceMonitor::_adjust_datacache_callback()", "starrocks::MemSpaceMonitor::start()::{lambda()#1}::operator()() const", "execute_native_thread_routine"),
			PathBackground, "daemon"},
		// P3 background-http-admin-action
		{"an HTTP admin repair action is background, not the segment writer's load", "",
			framesNamed("doris::BaseBetaRowsetWriter::build(std::shared_ptr<doris::Rowset>&)", "doris::PadRowsetAction::_pad_rowset(std::shared_ptr<doris::Tablet>, doris::Version const&)", "doris::PadRowsetAction::_handle(doris::HttpRequest*)", "doris::PadRowsetAction::handle(doris::HttpRequest*)", "doris::on_request(evhttp_request*, void*)", "evhttp_handle_request", "event_base_loop", "doris::EvHttpServer::start()::{lambda()#1}::operator()() const", "doris::ThreadPool::dispatch_thread()"),
			PathBackground, "http-admin"},
		{"an HTTP admin action is not the HTTP worker's start-up", "",
			framesNamed("doris::ConfigAction::handle(doris::HttpRequest*)", "doris::on_request(evhttp_request*, void*)", "evhttp_handle_request", "event_base_loop", "doris::EvHttpServer::start()::{lambda()#1}::operator()() const", "doris::ThreadPool::dispatch_thread()"),
			PathBackground, "http-admin"},
		{"an HTTP load action stays load", "",
			framesNamed("doris::HttpLoadAction::on_header(doris::HttpRequest*)", "doris::EvHttpServer::on_header(evhttp_request*)", "doris::on_header(evhttp_request*, void*)", "evhttp_read_header", "event_base_loop", "doris::EvHttpServer::start()::{lambda()#1}::operator()() const"),
			PathLoad, "ingestion"},
		// P4 single-replica load: the slave replica pulls the master's rowset
		{"a slave replica pulling the master's rowset is the load's", "",
			framesNamed("doris::HttpClient::download(std::string const&)", "doris::download_file_action(std::string&, std::string&, unsigned long, unsigned long)", "doris::PInternalServiceImpl::request_slave_tablet_pull_rowset(google::protobuf::RpcController*, doris::PTabletWriteSlaveRequest const*, doris::PTabletWriteSlaveResult*, google::protobuf::Closure*)::{lambda()#1}::operator()() const", "doris::WorkThreadPool<false>::work_thread(int)", "doris::Thread::supervise_thread(void*)"),
			PathLoad, "ingestion"},
		{"the master recording a slave replica's pull is the load's", "",
			framesNamed("doris::TxnManager::finish_slave_tablet_pull_rowset(long, long, long, bool)", "doris::PInternalServiceImpl::response_slave_tablet_pull_rowset(google::protobuf::RpcController*, doris::PTabletWriteSlaveDoneRequest const*, doris::PTabletWriteSlaveDoneResult*, google::protobuf::Closure*)::{lambda()#1}::operator()() const", "doris::WorkThreadPool<false>::work_thread(int)"),
			PathLoad, "ingestion"},
		// P5 Doris cloud internal service: event-driven warm-up
		{"the cloud warm-up RPC is file-cache background work, not query RPC", "",
			framesNamed("doris::CloudInternalServiceImpl::warm_up_rowset(google::protobuf::RpcController*, doris::PWarmUpRowsetRequest const*, doris::PWarmUpRowsetResponse*, google::protobuf::Closure*)", "brpc::policy::ProcessRpcRequest(brpc::InputMessageBase*)", "brpc::ProcessInputMessage(void*)", "bthread::TaskGroup::task_runner(long)"),
			PathBackground, "storage-daemon"},
		{"the cloud file-cache meta RPC is file-cache background work", "",
			framesNamed("doris::CloudInternalServiceImpl::get_file_cache_meta_by_tablet_id(google::protobuf::RpcController*, doris::PGetFileCacheMetaRequest const*, doris::PGetFileCacheMetaResponse*, google::protobuf::Closure*)", "brpc::policy::ProcessRpcRequest(brpc::InputMessageBase*)", "bthread::TaskGroup::task_runner(long)"),
			PathBackground, "storage-daemon"},
		// P6 scan-executor: Doris' time-sharing scan executor
		{"Doris' time-sharing scan executor is scan work", "1-2",
			framesNamed("doris::vectorized::TimeSharingTaskExecutor::_split_finished(std::shared_ptr<doris::vectorized::PrioritizedSplitRunner>, doris::Status const&)", "doris::vectorized::TimeSharingTaskExecutor::_dispatch_thread()", "doris::Thread::supervise_thread(void*)"),
			PathScan, "scan-executor"},
		// P7 StarRocks replicated-storage segment flush
		{"StarRocks' segment flush task of replicated storage is the load's", "",
			framesNamed("starrocks::SegmentFlushTask::_send_success_response(bool, starrocks::Status&)", "starrocks::SegmentFlushTask::run()", "starrocks::ThreadPool::dispatch_thread()", "starrocks::Thread::supervise_thread(void*)"),
			PathLoad, "ingestion"},
		// P8 Doris topic subscriber (FE-published workload groups and policies)
		{"FE-published workload-group topics are agent work", "",
			framesNamed("doris::WorkloadGroupMgr::upsert_workload_group(doris::WorkloadGroupInfo const&)", "doris::WorkloadGroupListener::handle_topic_info(std::vector<doris::TopicInfo> const&)", "doris::TopicSubscriber::handle_topic_info(doris::TPublishTopicRequest const&)", "doris::BaseBackendService::publish_topic_info(doris::TPublishTopicResult&, doris::TPublishTopicRequest const&)", "doris::BackendServiceProcessor::process_publish_topic_info(int, apache::thrift::protocol::TProtocol*, apache::thrift::protocol::TProtocol*, void*)"),
			PathBackground, "agent-task"},
		// The source audit's second round (CATALOG.md, round 9).
		{"StarRocks' query-cache manager is the query's", "1-2",
			framesNamed("starrocks::query_cache::CacheManager::probe(std::string const&)", "starrocks::query_cache::CacheOperator::probe_cache(long, long)", "starrocks::query_cache::CacheOperator::push_chunk(starrocks::RuntimeState*, std::shared_ptr<starrocks::Chunk> const&)", "starrocks::pipeline::PipelineDriver::process(starrocks::RuntimeState*, int)", "starrocks::pipeline::GlobalDriverExecutor::_worker_thread()"),
			PathQuery, "pipeline"},
		{"Doris' cache manager pruning stays a daemon's", "",
			framesNamed("doris::CacheManager::for_each_cache_prune_stale(doris::RuntimeProfile*)", "doris::Thread::supervise_thread(void*)"),
			PathBackground, "daemon"},
		{"StarRocks' profile report worker reports fragments: query bookkeeping", "",
			framesNamed("starrocks::ProfileReportWorker::_start_report_profile()", "starrocks::ProfileReportWorker::execute()", "starrocks::Thread::supervise_thread(void*)"),
			PathQuery, "fragment"},
		{"StarRocks' report task pools stay agent work", "",
			framesNamed("starrocks::ReportOlapTableTaskWorkerPool::_worker_thread_callback(void*)", "starrocks::Thread::supervise_thread(void*)"),
			PathBackground, "agent-task"},
		{"StarRocks' connector sink operator is the INSERT's", "1-2",
			framesNamed("starrocks::formats::AsyncFlushStreamPoller::poll()", "starrocks::pipeline::ConnectorSinkOperator::need_input() const", "starrocks::pipeline::PipelineDriver::is_not_blocked()", "starrocks::pipeline::PipelineDriverPoller::run_internal()"),
			PathLoad, "ingestion"},
		{"a StarRocks parquet file writer's row-group flush on the sink I/O pool is the INSERT's", "1-2",
			framesNamed("parquet::RowGroupSerializer::Close()", "starrocks::parquet::ChunkWriter::close()", "starrocks::formats::ParquetFileWriter::_flush_row_group()::{lambda()#1}::operator()() const", "std::function<void ()>::operator()() const", "starrocks::PriorityThreadPool::work_thread(int)"),
			PathLoad, "ingestion"},
		{"Doris' INSERT INTO tvf writer is a load", "1-2",
			framesNamed("doris::vectorized::VTVFTableWriter::_create_next_file_writer()", "doris::vectorized::VTVFTableWriter::write(doris::RuntimeState*, doris::vectorized::Block&)", "doris::vectorized::AsyncResultWriter::process_block(doris::RuntimeState*, doris::RuntimeProfile*)"),
			PathLoad, "ingestion"},
		{"StarRocks OUTFILE's parquet writer is the query's", "1-2",
			framesNamed("parquet::RowGroupSerializer::Close()", "starrocks::ParquetBuilder::finish()", "starrocks::FileResultWriter::close()", "starrocks::pipeline::FileSinkIOBuffer::close(starrocks::RuntimeState*)", "starrocks::pipeline::FileSinkIOBuffer::_process_chunk(bthread::TaskIterator<std::shared_ptr<starrocks::Chunk> >&)", "starrocks::pipeline::SinkIOBuffer::execute_io_task(void*, bthread::TaskIterator<std::shared_ptr<starrocks::Chunk> >&)"),
			PathQuery, "result"},
		{"Doris exchange receive decompression is the exchange's", "1-2",
			framesNamed("LZ4_decompress_safe", "doris::Lz4BlockCompression::decompress(doris::Slice const&, doris::Slice*)", "doris::vectorized::Block::deserialize(doris::PBlock const&)", "doris::vectorized::VDataStreamRecvr::SenderQueue::add_block(doris::PBlock const&, int, int, long, google::protobuf::Closure**, long, long)", "doris::vectorized::VDataStreamMgr::transmit_block(doris::PTransmitDataParams const*, google::protobuf::Closure**, long, long)"),
			PathQuery, "exchange"},
		{"StarRocks exchange receive decompression is the exchange's", "1-2",
			framesNamed("starrocks::Lz4BlockCompression::decompress(starrocks::Slice const&, starrocks::Slice*) const", "starrocks::DataStreamRecvr::SenderQueue::_deserialize_chunk(starrocks::ChunkPB const&, starrocks::Chunk*, starrocks::DataStreamRecvr::Metrics&, starrocks::faststring*)", "starrocks::DataStreamRecvr::PipelineSenderQueue::get_chunk(starrocks::Chunk**, int)", "starrocks::pipeline::ExchangeSourceOperator::pull_chunk(starrocks::RuntimeState*)"),
			PathQuery, "exchange"},
		{"Doris spill read I/O is the spill's", "1-2",
			framesNamed("doris::io::LocalFileReader::read_at_impl(unsigned long, doris::Slice, unsigned long*, doris::io::IOContext const*)", "doris::io::FileReader::read_at(unsigned long, doris::Slice, unsigned long*, doris::io::IOContext const*)", "doris::vectorized::SpillReader::read(doris::vectorized::Block*, bool*)", "doris::vectorized::SpillStream::read_next_block_sync(doris::vectorized::Block*, bool*)"),
			PathQuery, "spill"},
		{"the hash join's row-list iterator is the join's", "1-2",
			framesNamed("doris::vectorized::ForwardIterator<doris::vectorized::RowRefList>::operator++()", "doris::vectorized::ProcessHashTableProbe<1>::do_process<false, false, true>(doris::vectorized::MethodOneNumber<int, doris::JoinHashTable<int, doris::HashCRC32<int> > >&, doris::vectorized::Block*, unsigned int)", "doris::pipeline::HashJoinProbeOperatorX::pull(doris::RuntimeState*, doris::vectorized::Block*, bool*) const", "doris::pipeline::PipelineTask::execute(bool*)"),
			PathQuery, "join"},
		{"a page decompression under a segment read stays the scan's", "1-2",
			framesNamed("doris::Lz4BlockCompression::decompress(doris::Slice const&, doris::Slice*)", "doris::segment_v2::PageIO::read_and_decompress_page_(doris::segment_v2::PageReadOptions const&, doris::segment_v2::PageHandle*, doris::Slice*, doris::segment_v2::PageFooterPB*)", "doris::segment_v2::ColumnReader::read_page(doris::segment_v2::ColumnIteratorOptions const&, doris::segment_v2::PagePointer const&, doris::segment_v2::PageHandle*, doris::Slice*, doris::segment_v2::PageFooterPB*, doris::BlockCompressionCodec*) const"),
			PathScan, "segment-read"},
		{"the ES scroll client is the ES scan's", "1-2",
			framesNamed("doris::HttpClient::execute_post_request(std::string const&, std::string*)", "doris::ESScanReader::get_next(bool*, std::unique_ptr<doris::ScrollParser>&)"),
			PathScan, "scanner"},
		{"Doris' runtime-filter wrapper is the runtime filter's", "1-2",
			framesNamed("doris::RuntimePredicateWrapper::merge(doris::RuntimePredicateWrapper const*)", "doris::IRuntimeFilter::merge_from(doris::RuntimePredicateWrapper const*)"),
			PathQuery, "exec-node"},
		{"StarRocks' memory tracker on an allocating thread is memory tracking", "1-2",
			framesNamed("starrocks::MemTracker::release(long)", "starrocks::CurrentThread::mem_release(long)"),
			PathQuery, "memory-tracking"},
		// The source audit's third round (CATALOG.md, round 9).
		{"a Doris Java UDAF's JNI call is the UDF's, not a JNI reader", "",
			framesNamed("JNIEnv_::CallNonvirtualVoidMethod", "doris::vectorized::AggregateJavaUdafData::add", "doris::vectorized::AggregateJavaUdaf::add_batch", "doris::pipeline::AggSinkOperatorX::sink"),
			PathQuery, "udf"},
		{"a StarRocks Java UDTF's JNI call is the UDF's, not a JNI reader", "",
			framesNamed("JNIEnv_::CallObjectMethodA", "starrocks::JavaUDTFFunction::process", "starrocks::pipeline::TableFunctionOperator::pull_chunk"),
			PathQuery, "udf"},
		{"a StarRocks Python UDF's Arrow conversion is the UDF's, not a Parquet load", "",
			framesNamed("arrow::ArrayBuilder::Reserve", "starrocks::convert_columns_to_arrow_batch", "starrocks::AbstractArrowFuncCallStub::evaluate", "starrocks::ArrowFunctionCallExpr::evaluate_checked", "starrocks::ExprContext::evaluate", "starrocks::pipeline::ProjectOperator::push_chunk"),
			PathQuery, "udf"},
		{"a Doris Python UDF's Arrow Flight read is the UDF's, not a result or Parquet reader", "",
			framesNamed("arrow::ipc::RecordBatchStreamReader::ReadNext", "arrow::flight::FlightStreamReader::Next", "doris::PythonClient::read_batch", "doris::PythonUDFClient::evaluate"),
			PathQuery, "udf"},
		{"StarRocks' JVM metrics hook is metrics work even when the stack is cut above the registry", "",
			framesNamed("JNIEnv_::CallObjectMethod", "starrocks::JVMMetrics::get_memory_pools", "starrocks::JVMMetrics::update", "starrocks::JVMMetrics::install::{lambda}"),
			PathBackground, "daemon"},
		{"shared-data local pk-index eviction is storage bookkeeping", "",
			framesNamed("starrocks::lake::LocalPkIndexManager::evict", "starrocks::ThreadPool::dispatch_thread"),
			PathBackground, "storage"},
		{"the load-path cleaner thread's expired-dir removal is housekeeping, not a load", "",
			framesNamed("doris::LoadPathMgr::clean_one_path", "doris::LoadPathMgr::clean", "doris::LoadPathMgr::init::{lambda}", "doris::Thread::supervise_thread"),
			PathBackground, "daemon"},
		{"the broker ping thread is a daemon", "",
			framesNamed("starrocks::BrokerMgr::ping", "starrocks::BrokerMgr::ping_worker", "execute_native_thread_routine"),
			PathBackground, "daemon"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr := &symbolize.Crash{QueryID: tc.query, Threads: []symbolize.Thread{{Crashed: true, Frames: tc.frames}}}
			v := c.Classify(cr, signature.Signature{})
			ev := strings.Join(v.Evidence, "\n")
			assert.Equal(t, tc.path, v.Path, ev)
			if tc.area != "" {
				assert.Equal(t, tc.area, v.Area, ev)
			}
			assert.NotEmpty(t, v.PathConfidence)
		})
	}
}

// TestTabletIDRules: the Doris tablet id header (be-code-paths.md 8.2, 9)
// is id evidence: with a task id a load's flush, with Query id 0-0 a
// compaction or schema change; a frame rule still decides first.
func TestTabletIDRules(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	cases := []struct {
		name, query, tablet string
		frames              []symbolize.Frame
		path                Path
		area                string
	}{
		{name: "Doris tablet id with a task id: a load's memtable flush", query: "1-2", tablet: "10086",
			frames: framesNamed("doris::vectorized::DataTypeFactory::create_data_type(doris::TypeDescriptor const&, bool)"), path: PathLoad, area: "memtable-flush"},
		{name: "Doris tablet id with Query id 0-0: compaction or schema change", query: "0-0", tablet: "10086",
			frames: framesNamed("doris::vectorized::DataTypeFactory::create_data_type(doris::TypeDescriptor const&, bool)"), path: PathBackground, area: "compaction-or-schema-change"},
		{name: "Doris tablet id 0 changes nothing", query: "1-2", tablet: "0",
			frames: framesNamed("doris::vectorized::DataTypeFactory::create_data_type(doris::TypeDescriptor const&, bool)"), path: PathQuery, area: "unplaced"},
		{name: "column ops are weak leaves: with a Doris tablet id the id rules decide", query: "1-2", tablet: "10086",
			frames: framesNamed("doris::vectorized::ColumnVector<unsigned char>::insert_indices_from(doris::vectorized::IColumn const&, unsigned int const*, unsigned int const*)"), path: PathLoad, area: "memtable-flush"},
		{name: "column ops without a tablet id stay query", query: "1-2", tablet: "0",
			frames: framesNamed("doris::vectorized::ColumnVector<unsigned char>::insert_indices_from(doris::vectorized::IColumn const&, unsigned int const*, unsigned int const*)"), path: PathQuery, area: "column"},
		{name: "a frame rule still beats the tablet id", query: "1-2", tablet: "10086",
			frames: framesNamed("doris::vectorized::HashJoinNode::_probe(doris::RuntimeState*)"), path: PathQuery, area: "join"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr := &symbolize.Crash{QueryID: tc.query, TabletID: tc.tablet, Threads: []symbolize.Thread{{Crashed: true, Frames: tc.frames}}}
			v := c.Classify(cr, signature.Signature{})
			ev := strings.Join(v.Evidence, "\n")
			assert.Equal(t, tc.path, v.Path, ev)
			assert.Equal(t, tc.area, v.Area, ev)
		})
	}
	cr := &symbolize.Crash{QueryID: "0-0", TabletID: "10086", Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed("memcpy")}}}
	v := c.Classify(cr, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), `tablet id present ("10086")`)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
}

// TestNamesOnly: a names_only rule holds on the frame's own name, not on a
// lambda owner or a template type, while its other globs keep working.
func TestNamesOnly(t *testing.T) {
	const y = `schema: 1
revision: n1
paths:
  - id: lc-start
    path: lifecycle
    area: startup
    priority: 100
    names_only: true
    frames: ["*::Server::start"]
    why: start
  - id: q-any
    path: query
    area: any
    priority: 1
    frames: ["x::*"]
    why: any
`
	f, err := Parse("n.yaml", []byte(y))
	require.NoError(t, err)
	require.True(t, f.Rules[0].NamesOnly)
	c, err := New(f)
	require.NoError(t, err)
	classify := func(names ...string) Verdict {
		fs := make([]symbolize.Frame, len(names))
		for i, n := range names {
			fs[i] = symbolize.Frame{Function: n}
		}
		return c.Classify(&symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true, Frames: fs}}}, signature.Signature{})
	}
	assert.Equal(t, PathLifecycle, classify("x::Server::start()").Path)
	assert.Equal(t, PathQuery, classify("x::Server::start()::{lambda()#1}::operator()() const").Path, "a lambda owner does not count")
	assert.Equal(t, PathQuery, classify("std::_Function_handler<void (), x::Server::start()::{lambda()#1}>::_M_invoke(std::_Any_data const&)").Path, "a template type does not count for the names_only rule (the other rule still reads it)")
}

// TestWorkAboveCrashFrame: the library frames the signature skips above its
// crash frame (std::function invokers, hash tables) are work; their
// template arguments name it, while the signal handler above them does not.
func TestWorkAboveCrashFrame(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	frames := framesNamed("doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", "",
		"std::_Function_handler<void (), std::_Bind_result<void, void (doris::RoutineLoadTaskExecutor::*(doris::RoutineLoadTaskExecutor*, doris::StreamLoadContext*))(doris::StreamLoadContext*)> >::_M_invoke(std::_Any_data const&)",
		"doris::PriorityThreadPool::work_thread(int)", "execute_native_thread_routine", "start_thread", "clone")
	cr := &symbolize.Crash{Signal: "SIGSEGV", Threads: []symbolize.Thread{{Crashed: true, Frames: frames}}}
	sig := signature.Default().Generate(cr)
	require.Equal(t, "doris::PriorityThreadPool::work_thread", sig.CrashFrame, "the signature skips the std:: invoker")
	v := c.Classify(cr, sig)
	ev := strings.Join(v.Evidence, "\n")
	assert.Equal(t, PathLoad, v.Path, ev)
	assert.Contains(t, ev, "template type doris::RoutineLoadTaskExecutor of frame #2", ev)

	st := c.stack
	names := []string{"doris::signal::FailureSignalHandler", "", "std::_Function_handler::_M_invoke", "doris::PriorityThreadPool::work_thread"}
	assert.Equal(t, 2, st.workStart(names, 3), "the walk stops at the unnamed trampoline frame")
	assert.Equal(t, 1, st.workStart([]string{"__GI_abort", "std::vector::_M_realloc_insert", "doris::Foo::bar"}, 2), "and at a mechanism frame")
	assert.Equal(t, 0, st.workStart([]string{"doris::Foo::bar"}, 0))
}

// TestSharedComponentConfidence: a component several paths share (a
// segment reader: scans, compactions and schema changes read segments; a
// segment writer: loads, compactions and schema changes write them) decides
// at medium confidence alone and at high when a root of the same path holds
// deeper.
func TestSharedComponentConfidence(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	cases := []struct {
		name   string
		frames []symbolize.Frame
		path   Path
		conf   Confidence
		corr   string
	}{
		{"a segment reader alone", framesNamed("doris::segment_v2::ColumnReader::read_page(doris::segment_v2::ColumnIteratorOptions const&, doris::segment_v2::PagePointer const&, doris::segment_v2::PageHandle*, doris::Slice*, doris::segment_v2::PageFooterPB*, doris::BlockCompressionCodec*) const"),
			PathScan, ConfidenceMedium, ""},
		{"a segment reader under a scanner", framesNamed("doris::segment_v2::ColumnReader::read_page(doris::segment_v2::ColumnIteratorOptions const&, doris::segment_v2::PagePointer const&, doris::segment_v2::PageHandle*, doris::Slice*, doris::segment_v2::PageFooterPB*, doris::BlockCompressionCodec*) const",
			"doris::vectorized::OlapScanner::_get_block_impl(doris::RuntimeState*, doris::vectorized::Block*, bool*)"), PathScan, ConfidenceHigh, "scan-scanner"},
		{"a segment reader under a compaction is the compaction's", framesNamed("doris::segment_v2::ColumnReader::read_page(doris::segment_v2::ColumnIteratorOptions const&, doris::segment_v2::PagePointer const&, doris::segment_v2::PageHandle*, doris::Slice*, doris::segment_v2::PageFooterPB*, doris::BlockCompressionCodec*) const",
			"doris::Merger::vmerge_rowsets(std::shared_ptr<doris::BaseTablet>, doris::ReaderType, doris::TabletSchema const&, std::vector<std::shared_ptr<doris::RowsetReader>> const&, doris::RowsetWriter*, doris::Merger::Statistics*)"), PathBackground, ConfidenceHigh, ""},
		{"a segment writer alone", framesNamed("starrocks::ScalarColumnWriter::append(starrocks::Column const&)"), PathLoad, ConfidenceMedium, ""},
		{"a segment writer under a delta writer", framesNamed("starrocks::ScalarColumnWriter::append(starrocks::Column const&)", "starrocks::DeltaWriter::flush_memtable_async(bool)"), PathLoad, ConfidenceHigh, ""}, // the load root wins itself (priority 60)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr := &symbolize.Crash{QueryID: "1-2", Threads: []symbolize.Thread{{Crashed: true, Frames: tc.frames}}}
			v := c.Classify(cr, signature.Signature{})
			ev := strings.Join(v.Evidence, "\n")
			assert.Equal(t, tc.path, v.Path, ev)
			assert.Equal(t, tc.conf, v.PathConfidence, ev)
			if tc.corr != "" {
				assert.Contains(t, ev, "corroborated by rule "+tc.corr, ev)
			} else {
				assert.NotContains(t, ev, "corroborated", ev)
			}
		})
	}
}

// TestStarOSWorkerCallers: the worker's methods are starlet's only when no
// StarRocks frame calls them, and a lock fault in them is the worker gone
// only when StarRocks code (not starlet, not the worker's filesystem cache)
// took the worker's own lock.
func TestStarOSWorkerCallers(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	classify := func(frames ...string) Verdict {
		return c.Classify(&symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed(frames...)}}}, signature.Signature{})
	}
	v := classify("starrocks::StarOSWorker::get_shard_info(unsigned long) const", "starrocks::lake::TabletManager::is_tablet_in_worker(long)", "starrocks::lake::vacuum(starrocks::lake::TabletManager*, starrocks::VacuumRequest const&, starrocks::VacuumResponse*)")
	assert.NotEqual(t, "background-starlet-worker", v.PathRule, "a StarRocks caller places it: %v", v.Evidence)
	assert.Equal(t, PathBackground, v.Path, "vacuum is background by its own rule: %v", v.Evidence)
	v = classify("pthread_rwlock_rdlock", "starrocks::StarOSWorker::worker_info() const", "staros::starlet::StarMgrClient::worker_heartbeat()")
	assert.NotEqual(t, "lifecycle-staros-worker-gone", v.PathRule, "starlet holds its own reference to the worker: %v", v.Evidence)
	v = classify("pthread_rwlock_wrlock", "starrocks::LRUCache::lookup(starrocks::CacheKey const&, unsigned int)", "starrocks::StarOSWorker::find_fs_cache(std::string const&)", "starrocks::StarOSWorker::get_shard_filesystem(unsigned long, std::unordered_map<std::string, std::string> const&)")
	assert.NotEqual(t, "lifecycle-staros-worker-gone", v.PathRule, "the filesystem cache's lock is not the worker's: %v", v.Evidence)
}

// TestCreationStack: a stack whose first frames start a thread, in an
// incident with no signal, sanitizer error, message or exception, is the
// creation stack of the crashing thread (an ASAN `created by` block cut from
// its header): the code that created the pool is weak evidence, and main or
// ExecEnv::init below it (where every pool is created) is not lifecycle
// evidence. With a signal the same frames are a crash during startup.
func TestCreationStack(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	frames := framesNamed("starrocks::Thread::start_thread(std::string const&, std::string const&, std::function<void ()> const&, unsigned long, scoped_refptr<starrocks::Thread>*)",
		"starrocks::ThreadPool::create_thread()", "starrocks::ThreadPool::init()", "starrocks::ThreadPoolBuilder::build(std::unique_ptr<starrocks::ThreadPool>*) const",
		"starrocks::FragmentMgr::FragmentMgr(starrocks::ExecEnv*)", "starrocks::ExecEnv::_init(std::vector<starrocks::StorePath> const&)", "main")
	v := c.Classify(&symbolize.Crash{Kind: symbolize.KindSanitizer, Threads: []symbolize.Thread{{Crashed: true, Frames: frames}}}, signature.Signature{})
	require.NotEmpty(t, v.Evidence)
	assert.Equal(t, PathQuery, v.Path, v.Evidence[0])
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "thread-creation stack")
	assert.Contains(t, v.Evidence[0], "frames #0-#3")

	v = c.Classify(&symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGSEGV", Threads: []symbolize.Thread{{Crashed: true, Frames: frames}}}, signature.Signature{})
	assert.Equal(t, PathLifecycle, v.Path, "a fault while creating a pool at startup: %v", v.Evidence)

	// creationChain tests for "hread" before the globs: every glob must name a thread
	for _, g := range creationFrames {
		assert.Contains(t, g.text, "hread")
	}

	// Only the creators main and ExecEnv::init: nothing places the thread.
	v = c.Classify(&symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed("pthread_create", "starrocks::Thread::start_thread(std::string const&, std::string const&, std::function<void ()> const&, unsigned long, scoped_refptr<starrocks::Thread>*)", "starrocks::ExecEnv::_init(std::vector<starrocks::StorePath> const&)", "main")}}}, signature.Signature{})
	assert.Equal(t, PathUnknown, v.Path, "%v", v.Evidence)
	require.NotEmpty(t, v.Evidence)
	assert.Contains(t, v.Evidence[0], "creation stack")
	assert.Empty(t, v.PathRule, "no rule placed it")

	// With a zero query id the id rule holds, but the ids are not the
	// creation stack's evidence: the path stays unknown and names no rule.
	v = c.Classify(&symbolize.Crash{QueryID: "00000000-0000-0000-0000-000000000000", Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed("pthread_create", "starrocks::Thread::start_thread(std::string const&, std::string const&, std::function<void ()> const&, unsigned long, scoped_refptr<starrocks::Thread>*)", "starrocks::ExecEnv::_init(std::vector<starrocks::StorePath> const&)", "main")}}}, signature.Signature{})
	assert.Equal(t, PathUnknown, v.Path, "%v", v.Evidence)
	assert.Empty(t, v.PathRule, "%v", v.Evidence)
}

// TestCreationThread: when the scanner keeps a cut thread-creation stack as
// an auxiliary thread and the crashing thread shows no frame, the creator
// is weak evidence; with nothing placeable in it the ordinary decision runs.
func TestCreationThread(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	aux := symbolize.Thread{State: "thread-creation stack (header and frames #0-#3 cut; recognized by its frame #4)", Frames: framesNamed(
		"starrocks::ThreadPool::init()", "starrocks::ThreadPoolBuilder::build(std::unique_ptr<starrocks::ThreadPool>*) const",
		"starrocks::FragmentMgr::FragmentMgr(starrocks::ExecEnv*)", "starrocks::ExecEnv::_init(std::vector<starrocks::StorePath> const&)", "main")}
	v := c.Classify(&symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true}, aux}}, signature.Signature{})
	require.NotEmpty(t, v.Evidence)
	assert.Equal(t, PathQuery, v.Path, v.Evidence[0])
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "thread-creation stack")

	// a whole block keeps its header as the State
	aux.State = "Thread T12 (pip_exec_com) created by T0 here"
	v = c.Classify(&symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true}, aux}}, signature.Signature{})
	assert.Equal(t, PathQuery, v.Path, "%v", v.Evidence)

	// created under main only: no creator to read, the zero id decides as before
	aux.Frames = framesNamed("pthread_create", "starrocks::Thread::start_thread(std::string const&, std::string const&, std::function<void ()> const&, unsigned long, scoped_refptr<starrocks::Thread>*)", "main")
	v = c.Classify(&symbolize.Crash{QueryID: "00000000-0000-0000-0000-000000000000", Threads: []symbolize.Thread{{Crashed: true}, aux}}, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "thread-creation")

	// a crashing stack with frames is read as always, the creation stack is a bystander
	v = c.Classify(&symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed("starrocks::CompactionTask::run()")}, aux}}, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
}

// TestFileLineWithoutFrames: the preamble's file line is evidence of its
// own when the text shows no frame after the crash mechanism (a
// preamble-only paste, a dump cut at the signal handler).
func TestFileLineWithoutFrames(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	line := "Load file path: s3://bucket/dir/part-0001.parquet"
	mk := func(frames []symbolize.Frame) *symbolize.Crash {
		return &symbolize.Crash{Product: symbolize.ProductStarRocks, QueryID: "6a1f2c3d-0000-0000-0000-000000000001",
			Events:  []symbolize.Event{{Line: 2, Kind: symbolize.EventLoadFile, Text: line}},
			Threads: []symbolize.Thread{{Crashed: true, Frames: frames}}}
	}
	for name, frames := range map[string][]symbolize.Frame{
		"no frames":           nil,
		"cut at the handler":  framesNamed("google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)"),
		"unnamed frames only": {{Module: "/lib64/libc.so.6"}},
	} {
		t.Run(name, func(t *testing.T) {
			v := c.Classify(mk(frames), signature.Signature{})
			ev := strings.Join(v.Evidence, "\n")
			assert.Equal(t, PathLoad, v.Path, ev)
			assert.Contains(t, ev, "no frame after the crash mechanism")
			assert.Contains(t, ev, line)
		})
	}
	// a frame of work still decides where the rule holds
	v := c.Classify(mk(framesNamed("starrocks::CompactionTask::run()")), signature.Signature{})
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
}

// TestSanitizerThreadName: a sanitizer names a thread `T789
// (alter_tablet)`; the scanner keeps alter_tablet as its name, so the
// thread rules see it (corpus starrocks/124: an ASAN report in the
// schema-change pool whose only frame is std::mismatch's comparator).
func TestSanitizerThreadName(t *testing.T) {
	c := defaultCatalog(t)
	p := parseLog(t, "testdata/corpus/starrocks/124-asan-pk-schema-change-alter-tablet-thread-heap-buffer-overflow-mismatch.txt")
	require.Len(t, p.crashes, 1)
	ct := p.crashes[0].CrashingThread()
	require.NotNil(t, ct)
	assert.Equal(t, "alter_tablet", ct.Name)
	v := c.Classify(p.crashes[0], p.sigs[0])
	require.NotEmpty(t, v.Evidence)
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], `thread name "alter_tablet"`)
}

// TestCutSanitizerStack: a sanitizer report pasted from its tail has no
// crashing stack, only a stack whose header was cut (the access, freed-by
// or allocated-by stack) before its `Thread T… created by` blocks. The
// code of that stack places the crash at low confidence (real reports from
// the corpus); under main it is most likely a thread-creation stack that
// lost its header, and lifecycle is not read from it.
func TestCutSanitizerStack(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	for _, tc := range []struct {
		file string
		want Path
	}{
		{"starrocks/130-asan-sqltester-task-worker-pool-thread-created-by-t0-tail.txt", PathBackground},
		{"starrocks/131-asan-tail-scan-executor-worker-thread-con-wg-scan-io-created.txt", PathScan},
		{"starrocks/132-asan-tail-geo-function-thread-t220-fragment-mgr-created.txt", PathQuery},
		{"doris/171-asan-tail-sender-queue-add-block-fragment-mgr-thread-created-by-bthread.txt", PathUnknown},
	} {
		p := parseLog(t, "testdata/corpus/"+tc.file)
		require.Len(t, p.crashes, 1, tc.file)
		cr := p.crashes[0]
		require.Equal(t, symbolize.KindSanitizer, cr.Kind, tc.file)
		require.NotNil(t, cutSanitizerStack(cr), tc.file)
		v := c.Classify(cr, p.sigs[0])
		require.NotEmpty(t, v.Evidence, tc.file)
		assert.Equal(t, tc.want, v.Path, "%s: %v", tc.file, v.Evidence)
		if tc.want != PathUnknown {
			assert.Equal(t, ConfidenceLow, v.PathConfidence, tc.file)
			assert.Contains(t, v.Evidence[0], "sanitizer stack whose header is cut", tc.file)
		} else {
			assert.NotContains(t, strings.Join(v.Evidence, "\n"), "header is cut", tc.file)
		}
	}

	// A crashing stack with frames is read as always: the cut stack is a bystander.
	cut := symbolize.Thread{Frames: framesNamed("starrocks::workgroup::ScanExecutor::worker_thread()", "starrocks::ThreadPool::dispatch_thread()")}
	v := c.Classify(&symbolize.Crash{Kind: symbolize.KindSanitizer, Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed("starrocks::CompactionTask::run()")}, cut}}, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "header is cut")
	// Only a sanitizer report has cut stacks: the same stack beside a
	// signal dump's empty crashing thread is not read.
	v = c.Classify(&symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGSEGV", Threads: []symbolize.Thread{{Crashed: true}, cut}}, signature.Signature{})
	assert.Equal(t, PathUnknown, v.Path, "%v", v.Evidence)
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "header is cut")
	// and in a sanitizer report it is
	v = c.Classify(&symbolize.Crash{Kind: symbolize.KindSanitizer, Threads: []symbolize.Thread{{Crashed: true}, cut}}, signature.Signature{})
	assert.Equal(t, PathScan, v.Path, "%v", v.Evidence)
}

// TestPathFromDefect: a crash no frame places (a shell's report of the
// death, no stack) takes the path of the known defect it matches, at low
// confidence, and a defect without a fix gives its workaround in the
// advice (real reports: apache/doris#7266, StarRocks operator#92).
func TestPathFromDefect(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	for file, id := range map[string]string{
		"defects/doris/start-be-sh-illegal-instruction-zh-no-avx2.txt":                               "DORIS-6251-cpu-without-avx2",
		"defects/starrocks/start-backend-sh-illegal-instruction-no-avx2.txt":                         "SR-52256-cpu-without-avx2",
		"corpus/starrocks/135-allin1-3.5-docker-macos-supervisord-beservice-sigill-restart-loop.txt": "SR-52256-cpu-without-avx2",
	} {
		p := parseLog(t, "testdata/"+file)
		require.NotEmpty(t, p.crashes, file)
		v := c.Classify(p.crashes[0], p.sigs[0])
		require.NotNil(t, v.Defect, "%s: %v", file, v.Evidence)
		assert.Equal(t, id, v.Defect.ID, file)
		assert.Equal(t, PathLifecycle, v.Path, "%s: %v", file, v.Evidence)
		assert.Equal(t, ConfidenceLow, v.PathConfidence, file)
		assert.Contains(t, v.Evidence[0], "from the matched defect "+id, file)
		assert.Contains(t, v.Advice, "no fix known; workaround: Check the CPU", file)
	}
}

// TestProductTwins: a crash that does not name its product (a bare
// `Illegal instruction (core dumped)`) matches the AVX2 entries of both
// products alike; the id order picks one, and the verdict says so and names
// the other. A crash that names its product gets its product's entry alone.
func TestProductTwins(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	for _, tc := range []struct {
		product  symbolize.Product
		id, twin string
	}{
		{symbolize.ProductUnknown, "DORIS-6251-cpu-without-avx2", "SR-52256-cpu-without-avx2 (starrocks)"},
		{symbolize.ProductStarRocks, "SR-52256-cpu-without-avx2", ""},
		{symbolize.ProductDoris, "DORIS-6251-cpu-without-avx2", ""},
	} {
		cr := &symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGILL", Product: tc.product, Corrupted: true, CorruptedReason: "only the shell's report of the crash (Illegal instruction): no stack was printed"}
		sig := signature.Default().Generate(cr)
		v := c.Classify(cr, sig)
		require.NotNil(t, v.Defect, "%s: %v", tc.product, v.Evidence)
		assert.Equal(t, tc.id, v.Defect.ID, tc.product)
		ev := strings.Join(v.Evidence, "\n")
		if tc.twin == "" {
			assert.NotContains(t, ev, "does not name its product", tc.product)
			assert.NotContains(t, v.Advice, "for another product", tc.product)
			continue
		}
		assert.Contains(t, ev, "the crash does not name its product; as specific for another product: "+tc.twin)
		assert.Contains(t, v.Advice, "for another product see "+tc.twin)
	}
}
