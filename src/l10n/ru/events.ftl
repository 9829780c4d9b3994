# Russian texts of events (Fluent; see src/l10n/mod.rs). One message per key.
## The engine's event log (src/reconcile/runtime/events.rs): the dashboard's log pane and
## `cvo demo --headless`. State names reuse the dashboard's engine-state-* words; condition
## types, reasons, messages, history states, modes and command names stay as the API says.
event-state = состояние { $state }
event-state-change = состояние { $from } → { $to }
event-state-blocked = Заблокирован ({ $why })
event-switched = переключён в режим { $mode } (был { $was })
event-no-version = <без версии>
event-desired-accepted = желаемое обновление принято: { $v } ({ $image })
event-lease-acquired-by = Lease получен ({ $who })
event-lease-acquired = Lease получен
event-lease-released = Lease освобождён: watch-only, запись остановлена
event-lease-lost = Lease потерян: запись остановлена
event-lease-held = Lease удерживает { $who }: ожидание
event-pass-started = проход { $n } начат
event-took = {" "}за { $secs } с
event-reason-error = ошибка
event-pass-incomplete = проход { $n } не завершён (выполнено { $done }/{ $total }{ $took }): { $reason }: { $message }
event-pass-failed = проход { $n } не удался (выполнено { $done }/{ $total }{ $took }): { $reason }: { $message }
event-pass-finished = проход { $n } завершён: выполнено { $done }/{ $total }{ $took }
event-run-level-done = уровень запуска { $n } пройден ({ $done }/{ $total })
event-history-completed = история обновлений: { $version } Completed
event-history-partial = история обновлений: { $version } Partial (обновление начато)
event-command-done = команда { $command }: { $m }
event-command-refused = команда { $command } отклонена: { $why }
event-error = ошибка: { $e }
