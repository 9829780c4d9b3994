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
## Update-health insights' descriptions (src/ui/model/insight_text.rs)
insight-desc-paused-pool = Пул машин на паузе: это останавливает все изменения узлов пула, включая обновления. Узлы не будут обновлены, пока администратор не снимет пул с паузы.
insight-desc-cv-unclear = Текущее состояние синхронизации Cluster Version неясно. Для отладки см. 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1'.
insight-desc-previous-in-progress = Текущее обновление до { $target } начато, когда предыдущее обновление до версии { $previous } ещё выполнялось
insight-desc-node-condition = У узла условие { $condition } с причиной "{ $reason }" и сообщением { $message }
insight-desc-alert-during = Оповещение начало срабатывать во время обновления.
insight-desc-alert-known-during = Оповещение, которое, как известно, влияет на обновления, начало срабатывать во время обновления.
insight-desc-alert-known-before = Оповещение, которое, как известно, влияет на обновления, срабатывает с момента до начала обновления.
insight-desc-alert-none = {" "}У оповещения нет описания.
insight-desc-alert-text = {" "}Описание оповещения: { $text }
insight-desc-refused = Кластер остаётся на текущем релизе: релиз, запрошенный в spec.desiredUpdate ({ $target }), отклонён оператором версии кластера (ReleaseAccepted=False). Устраните причину (хранилища подписей, доступ к реестру), запросите другой релиз или отмените запрос (cvo upgrade --clear). { $message }
insight-desc-not-picked-up = spec.desiredUpdate запрашивает { $target }, но ни один оператор версии кластера с тех пор не читал ClusterVersion: он на поколении { $generation }, его статус — на { $observed }. Проверьте, что оператор версии кластера работает и держит Lease openshift-cluster-version/version (его журнал говорит, почему он не синхронизирует).
insight-desc-loading = Обновление запрошено по образу, а оператор версии кластера ещё не загрузил релиз (получение, проверка), поэтому ни один оператор не может сообщить его версию и оценить время нельзя.{ $accepted }
insight-desc-waiting-on = Кластерный оператор { $name } сообщает для себя версию { $target }, поэтому oc считает его обновлённым, но оператор версии кластера ждёт, пока будет сообщена каждая версия, перечисленная в манифесте релиза ({ $progressing }). Проверьте операнды и журнал оператора.
