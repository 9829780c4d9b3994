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
## Update-health insights as the dashboard shows them (src/ui/model/insight_text.rs: assess's
## English sentences, oc's for `cvo status`, matched and translated at drawing time). Kinds,
## condition types, reasons, names and versions stay as the API and oc say them.
insight-proceeding-well = Обновление идёт нормально
insight-cv-no-failing = у Cluster Version { $name } нет условия Failing
insight-cv-failing = Cluster Version { $name } не может продолжить обновление ({ $reason })
insight-cv-may-be-failing = Cluster Version { $name }, возможно, не может продолжить обновление ({ $reason })
insight-alert-firing = Сработало оповещение: { $alert }
insight-co-unavailable = Cluster Operator { $name } недоступен ({ $reason })
insight-co-degraded = Cluster Operator { $name } деградирован ({ $reason })
insight-paused-pool = Устаревшие узлы пула машин на паузе '{ $pool }' не будут обновлены
insight-node-not-ready = Узел { $name } не готов
insight-node-disk-pressure = На узле { $name } нехватка диска
insight-node-network = На узле { $name } недоступна сеть
insight-node-degraded = Узел { $name } деградирован
insight-node-unavailable = Узел { $name } недоступен
insight-previous-never-completed = Предыдущее обновление до { $previous } не завершилось, последнее завершённое обновление — { $last }
insight-no-reason = причина не указана
insight-not-accepted = запрошенное обновление до { $target } не принято: { $why }
insight-not-picked-up = запрошенное обновление до { $target } не подхвачено ни одним оператором версии кластера
insight-waiting-release = ожидание загрузки релиза { $image }: его версия пока неизвестна
insight-unknown-time = неизвестное время
insight-waiting-on = ожидание, пока { $name } сообщит { $what }: уже { $waited }
